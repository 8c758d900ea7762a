package store

// Stats returns a snapshot of the counters, summed over the shards.
func (s *Store) Stats() Stats {
	var st Stats
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.add(&sh.st)
		st.CurrItems += uint64(sh.idx.count)
		for c := range sh.cls {
			st.Bytes += sh.cls[c].bytes
		}
		st.HashBytes += uint64(sh.idx.bytes())
		sh.mu.Unlock()
	}
	malloced, _ := s.slabs.arena.usage()
	st.TotalMallocedBytes = uint64(malloced)*pageSize + uint64(max(s.cfg.Premalloced, 0))
	st.CmdFlush = s.cmdFlush.Load()
	st.LimitMaxbytes = uint64(s.memLimit.Load())
	st.HashPowerLevel = uint64(s.hashPower.Load())
	return st
}

// add accumulates one shard's event counters (the gauges are summed by Stats).
func (st *Stats) add(o *Stats) {
	st.TotalItems += o.TotalItems
	st.CmdGet += o.CmdGet
	st.CmdSet += o.CmdSet
	st.CmdTouch += o.CmdTouch
	st.GetHits += o.GetHits
	st.GetMisses += o.GetMisses
	st.GetExpired += o.GetExpired
	st.GetFlushed += o.GetFlushed
	st.TouchHits += o.TouchHits
	st.TouchMisses += o.TouchMisses
	st.DeleteHits += o.DeleteHits
	st.DeleteMisses += o.DeleteMisses
	st.IncrHits += o.IncrHits
	st.IncrMisses += o.IncrMisses
	st.DecrHits += o.DecrHits
	st.DecrMisses += o.DecrMisses
	st.CasHits += o.CasHits
	st.CasMisses += o.CasMisses
	st.CasBadval += o.CasBadval
	st.Evictions += o.Evictions
	st.Reclaimed += o.Reclaimed
	st.ExpiredUnfetched += o.ExpiredUnfetched
	st.EvictedUnfetched += o.EvictedUnfetched
	st.EvictedActive += o.EvictedActive
	st.OutOfMemory += o.OutOfMemory
	st.RefsLost += o.RefsLost
	st.ReservationsLost += o.ReservationsLost
}

// ResetStats zeroes the counters that `stats reset` clears; item counts,
// bytes and memory sizes are state, not counters, and stay.
func (s *Store) ResetStats() {
	s.cmdFlush.Store(0)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.st = Stats{}
		for c := range sh.cls {
			sh.cls[c].resetEvents()
		}
		sh.mu.Unlock()
	}
}

// oldestScan bounds how many records per shard Classes reads from the ring
// tail to find each class's least recently used item. Dead records count:
// until a ring wraps, its tail keeps every overwritten, deleted or flushed
// record, and a walk to the first 512 live ones read all of them (24 ms
// and the shard's lock per `stats items` after a million overwrites).
const oldestScan = 512

// Classes returns per-class statistics for `stats slabs` and `stats items`:
// every size class that holds items or has counted an event. Pages are
// reported in 1 MiB units of the bytes the class's items occupy, and
// OldestAge comes from the oldest records near each ring's tail.
func (s *Store) Classes() []ClassStats {
	now := clampTime(s.Now())
	sum := make([]classCounters, len(s.classes.sizes))
	oldest := make([]uint32, len(s.classes.sizes))
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for c := range sh.cls {
			addClass(&sum[c], &sh.cls[c])
		}
		sh.mu.Unlock()
	}
	for id := 1; id < len(s.slabs.classes); id++ {
		oldest[id] = s.oldestAccess(&s.slabs.classes[id])
	}
	var out []ClassStats
	for id := 1; id < len(s.classes.sizes); id++ {
		c := &sum[id]
		sc := &s.slabs.classes[id]
		sc.mu.Lock()
		pages, free := sc.pages, sc.freeChunks()
		sc.mu.Unlock()
		if *c == (classCounters{}) && pages == 0 {
			continue
		}
		cs := ClassStats{
			ID:               id,
			ChunkSize:        sc.size,
			ChunksPer:        sc.perPage,
			TotalPages:       pages,
			UsedChunks:       uint64(pages*sc.perPage - free),
			FreeChunks:       uint64(free),
			Items:            c.items,
			Bytes:            c.bytes,
			MemRequested:     c.requested,
			Evicted:          c.evicted,
			EvictedNonzero:   c.evictedNonzero,
			Outofmemory:      c.outOfMemory,
			Reclaimed:        c.reclaimed,
			CrawlerReclaimed: c.crawlerReclaimed,
			ExpiredUnfetched: c.expiredUnfetched,
			EvictedUnfetched: c.evictedUnfetched,
			GetHits:          c.getHits,
			CmdSet:           c.cmdSet,
			DeleteHits:       c.deleteHits,
			IncrHits:         c.incrHits,
			DecrHits:         c.decrHits,
			CasHits:          c.casHits,
			CasBadval:        c.casBadval,
			TouchHits:        c.touchHits,
			Temp:             c.temp,
			TempHits:         c.tempHits,
		}
		if oldest[id] != 0 && oldest[id] <= now {
			cs.OldestAge = int64(now - oldest[id])
		}
		out = append(out, cs)
	}
	return out
}

func addClass(dst, src *classCounters) {
	dst.items += src.items
	dst.bytes += src.bytes
	dst.requested += src.requested
	dst.evicted += src.evicted
	dst.evictedUnfetched += src.evictedUnfetched
	dst.evictedNonzero += src.evictedNonzero
	dst.held = dst.held || src.held
	dst.reclaimed += src.reclaimed
	dst.crawlerReclaimed += src.crawlerReclaimed
	dst.expiredUnfetched += src.expiredUnfetched
	dst.outOfMemory += src.outOfMemory
	dst.getHits += src.getHits
	dst.cmdSet += src.cmdSet
	dst.deleteHits += src.deleteHits
	dst.incrHits += src.incrHits
	dst.decrHits += src.decrHits
	dst.casHits += src.casHits
	dst.casBadval += src.casBadval
	dst.touchHits += src.touchHits
	dst.temp += src.temp
	dst.tempHits += src.tempHits
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// oldestAccess is the last access time of the item longest unread at the
// tails of c's queues (0: none), for `stats items` age. A tail whose shard
// is busy is passed over.
func (s *Store) oldestAccess(c *slabClass) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	oldest := uint32(0)
	for qi := range c.q {
		pos := c.q[qi].tail
		if pos == nilLoc {
			continue
		}
		r := s.slabs.rec(pos)
		sh := s.shardOf(r)
		if !sh.mu.TryLock() {
			continue
		}
		if a := r.accessed(); oldest == 0 || a < oldest {
			oldest = a
		}
		sh.mu.Unlock()
	}
	return oldest
}
