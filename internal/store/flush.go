package store

import "time"

// FlushAll invalidates every item stored before now+delay seconds. Without a
// delay the rings are emptied at once. With one, memcached's rule applies:
// at delay-1 seconds from now, items last stored at or before that second
// become invalid (a later flush_all replaces a pending one). An absolute
// time already past empties the rings too, as memcached's CAS check does;
// under DisableCAS, where memcached compares store times only, it
// invalidates just the items stored at or before that time.
func (s *Store) FlushAll(delay int64) {
	s.cmdFlush.Add(1)
	now64 := s.Now()
	var oldest uint32
	if delay > 0 {
		abs := int64(absExptime(delay, now64))
		switch {
		case abs > now64:
			oldest = clampTime(abs - 1)
		case s.cfg.DisableCAS:
			oldest = clampTime(abs)
		}
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		if oldest == 0 {
			sh.reset(clampTime(now64))
		}
		sh.flushOldest, sh.flushSwept, sh.flushSweeping = oldest, false, false
		sh.mu.Unlock()
	}
}

// Reclaimer pacing: each pass looks at up to reclaimBatch index slots per lock
// hold and reclaimBudget slots per tick in all, so a full sweep of a large
// store is spread over seconds and never holds a shard for long.
const (
	reclaimEvery  = 5 // clock ticks between reclaimer rounds
	reclaimBatch  = 1024
	reclaimBudget = 32 * 1024
)

// background advances the coarse clock and runs the reclaimer until Close.
func (s *Store) background() {
	defer close(s.done)
	t := time.NewTicker(clockTick)
	defer t.Stop()
	next := 0 // shard the reclaimer continues with
	for tick := 0; ; tick++ {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.clock.Store(now.Unix())
		}
		if tick%reclaimEvery == 0 {
			next = s.reclaim(next, reclaimBudget)
		}
	}
}

// reclaim sweeps index slots of shards starting at shard next, unlinking
// expired and flushed items, until budget slots were examined or every shard
// was visited once. It returns the shard to start with next time.
func (s *Store) reclaim(next, budget int) int {
	now := clampTime(s.Now())
	for visited := 0; visited < len(s.shards) && budget > 0; visited++ {
		sh := &s.shards[next]
		sh.mu.Lock()
		done, examined := sh.sweep(now, min(budget, reclaimBatch))
		sh.mu.Unlock()
		budget -= examined + 1
		if done {
			next = (next + 1) % len(s.shards)
		}
	}
	return next
}

// sweep examines up to n index slots from the shard's cursor. It reports
// whether the shard has nothing more to sweep for now (it has reached the
// table's end or has nothing that can expire) and how many slots it examined.
func (sh *shard) sweep(now uint32, n int) (done bool, examined int) {
	pendingFlush := sh.flushOldest != 0 && sh.flushOldest <= now && !sh.flushSwept
	if sh.expiring == 0 && !pendingFlush {
		sh.cursor = 0
		return true, 0
	}
	if pendingFlush && !sh.flushSweeping {
		// The sweep that clears a due flush must cover the whole table.
		sh.cursor, sh.flushSweeping = 0, true
	}
	ix := &sh.idx
	i := sh.cursor
	for ; examined < n && int(i) < len(ix.slots); examined++ {
		if ix.slots[i] == 0 {
			i++
			continue
		}
		pos := int(ix.loc(int(i))) << 3
		r := sh.rec(pos)
		if !r.expired(now) && !sh.flushed(r, now) {
			i++
			continue
		}
		c := &sh.cls[r.class()]
		sh.st.Reclaimed++
		c.reclaimed++
		c.crawlerReclaimed++
		if r.bits()&recFetched == 0 {
			sh.st.ExpiredUnfetched++
			c.expiredUnfetched++
		}
		// Removal shifts a later entry into slot i: look at i again.
		sh.unlink(int(i))
	}
	if int(i) >= len(ix.slots) {
		sh.cursor = 0
		if pendingFlush {
			sh.flushSwept = true
		}
		return true, examined
	}
	sh.cursor = i
	return false, examined
}

// Crawl sweeps every shard's whole index at once, unlinking expired and
// flushed items, as memcached's `lru_crawler crawl` does; the background
// reclaimer otherwise gets to them a bounded batch per tick.
func (s *Store) Crawl() {
	now := clampTime(s.Now())
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.cursor = 0
		sh.mu.Unlock()
		for done := false; !done; {
			sh.mu.Lock()
			done, _ = sh.sweep(now, reclaimBatch)
			sh.mu.Unlock()
		}
	}
}

// CountFlush counts a flush_all that was refused (-F) in cmd_flush, as
// memcached counts it.
func (s *Store) CountFlush() { s.cmdFlush.Add(1) }

// CancelFlush drops a pending delayed flush_all and invalidates nothing: what
// memcached does for a flush_all whose absolute time lies before the server
// started. It counts in cmd_flush.
func (s *Store) CancelFlush() {
	s.cmdFlush.Add(1)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.flushOldest, sh.flushSwept, sh.flushSweeping = 0, false, false
		sh.mu.Unlock()
	}
}
