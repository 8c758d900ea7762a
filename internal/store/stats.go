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
			st.Bytes += sh.cls[c].requested // memcached's bytes: its item sizes
		}
		st.HashBytes += uint64(sh.idx.bytes())
		for c := range sh.cls {
			st.CrawlerReclaimed += sh.cls[c].crawlerReclaimed
			st.CrawlerItemsChecked += sh.cls[c].crawlerChecked
		}
		st.LRUBumpsDropped += sh.bumpsDropped
		sh.mu.Unlock()
	}
	malloced, pool := s.slabs.arena.usage()
	st.TotalMallocedBytes = uint64(malloced)*pageSize + uint64(max(s.cfg.Premalloced, 0))
	st.SlabGlobalPagePool = uint64(pool)
	for id := 1; id < len(s.slabs.classes); id++ {
		c := &s.slabs.classes[id]
		c.mu.Lock()
		st.MovesToCold += c.movesToCold
		st.MovesToWarm += c.movesToWarm
		st.MovesWithinLRU += c.movesWithinLRU
		st.DirectReclaims += c.directReclaims
		c.mu.Unlock()
	}
	st.LRUMaintainerJuggles = s.juggles.Load()
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
	// The LRU's moves and the maintainer's passes are memcached's
	// per-class item stats and global stats: its reset clears them too.
	for id := 1; id < len(s.slabs.classes); id++ {
		c := &s.slabs.classes[id]
		c.mu.Lock()
		c.movesToCold, c.movesToWarm, c.movesWithinLRU, c.directReclaims = 0, 0, 0, 0
		c.mu.Unlock()
	}
	s.juggles.Store(0)
}

// Classes returns per-class statistics for `stats slabs` and `stats items`:
// every slab class that owns pages, holds items or has counted an event.
func (s *Store) Classes() []ClassStats {
	now := clampTime(s.Now())
	sum := make([]classCounters, len(s.classes.sizes))
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for c := range sh.cls {
			addClass(&sum[c], &sh.cls[c])
		}
		sh.mu.Unlock()
	}
	var out []ClassStats
	for id := 1; id < len(s.classes.sizes); id++ {
		c := &sum[id]
		q := s.slabs.classes[id].snapshot(s, now)
		if *c == (classCounters{}) && q.pages == 0 {
			continue
		}
		out = append(out, ClassStats{
			ID:                  id,
			ChunkSize:           q.size,
			ChunksPer:           q.perPage,
			TotalPages:          q.pages,
			UsedChunks:          uint64(q.pages*q.perPage - q.free),
			FreeChunks:          uint64(q.free),
			Items:               c.items,
			MemRequested:        c.requested,
			NumberHot:           uint64(q.items[queueHot]),
			NumberWarm:          uint64(q.items[queueWarm]),
			NumberCold:          uint64(q.items[queueCold]),
			NumberTemp:          uint64(q.items[queueTemp]),
			AgeHot:              int64(q.age[queueHot]),
			AgeWarm:             int64(q.age[queueWarm]),
			OldestAge:           int64(q.age[queueCold]),
			Evicted:             c.evicted,
			EvictedNonzero:      c.evictedNonzero,
			EvictedActive:       c.evictedActive,
			EvictedTime:         int64(c.evictedTime),
			Outofmemory:         c.outOfMemory,
			Reclaimed:           c.reclaimed,
			CrawlerReclaimed:    c.crawlerReclaimed,
			CrawlerItemsChecked: c.crawlerChecked,
			ExpiredUnfetched:    c.expiredUnfetched,
			EvictedUnfetched:    c.evictedUnfetched,
			MovesToCold:         q.movesToCold,
			MovesToWarm:         q.movesToWarm,
			MovesWithinLRU:      q.movesWithinLRU,
			DirectReclaims:      q.directReclaims,
			HitsToHot:           c.hitsHot,
			HitsToWarm:          c.hitsWarm,
			HitsToCold:          c.hitsCold,
			HitsToTemp:          c.hitsTemp,
			GetHits:             c.getHits,
			CmdSet:              c.cmdSet,
			DeleteHits:          c.deleteHits,
			IncrHits:            c.incrHits,
			DecrHits:            c.decrHits,
			CasHits:             c.casHits,
			CasBadval:           c.casBadval,
			TouchHits:           c.touchHits,
			Temp:                c.temp,
		})
	}
	return out
}

func addClass(dst, src *classCounters) {
	dst.items += src.items
	dst.requested += src.requested
	dst.evicted += src.evicted
	dst.evictedUnfetched += src.evictedUnfetched
	dst.evictedNonzero += src.evictedNonzero
	dst.reclaimed += src.reclaimed
	dst.crawlerReclaimed += src.crawlerReclaimed
	dst.crawlerChecked += src.crawlerChecked
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
	dst.evictedActive += src.evictedActive
	dst.evictedTime = max(dst.evictedTime, src.evictedTime)
	dst.hitsHot += src.hitsHot
	dst.hitsWarm += src.hitsWarm
	dst.hitsCold += src.hitsCold
	dst.hitsTemp += src.hitsTemp
}

// classSnapshot is what Classes reads of a slab class under its lock.
type classSnapshot struct {
	size, perPage, pages, free                               int
	items                                                    [numQueues]int
	age                                                      [numQueues]uint32 // seconds the queue's tail item has gone unread
	movesToCold, movesToWarm, movesWithinLRU, directReclaims uint64
}

// snapshot reads c's pages, queues and move counters. A queue's age needs
// its tail item's shard, which is only tried (a busy one reads as 0).
func (c *slabClass) snapshot(s *Store, now uint32) classSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := classSnapshot{size: c.size, perPage: c.perPage, pages: c.pages, free: c.freeChunks(),
		movesToCold: c.movesToCold, movesToWarm: c.movesToWarm, movesWithinLRU: c.movesWithinLRU,
		directReclaims: c.directReclaims}
	for qi := range c.q {
		q.items[qi] = c.q[qi].items
		if pos := c.q[qi].tail; pos != nilLoc {
			q.age[qi] = s.tailAge(pos, now)
		}
	}
	return q
}

// tailAge is how long the queued record at pos has gone unread, or 0 when
// its shard is busy. Its class is locked.
func (s *Store) tailAge(pos uint64, now uint32) uint32 {
	r := s.slabs.rec(pos)
	sh := s.shardOf(r)
	if !sh.mu.TryLock() {
		return 0
	}
	defer sh.mu.Unlock()
	return now - min(now, r.accessed())
}
