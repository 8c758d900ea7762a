package store

// FlushAll is memcached's flush_all: items stored before a point in time
// become invalid, lazily. Nothing is removed here; a later lookup of a
// flushed item counts get_flushed and misses, an LRU tail pull reclaims
// its chunk when it meets it, and the reclaimer sweeps the rest flushSweepDelay
// seconds after the flush takes effect, as memcached's LRU crawler finds
// them later.
//
// The point follows memcached's rule: new_oldest is now (no delay or 0) or
// the delay as an exptime (relative up to 30 days, else absolute). With CAS
// on, oldest_live is new_oldest-1 and, if that is not in the future, every
// item holding a CAS handed out before the flush is invalid too, which
// makes `flush_all` exact. Under -C there is no CAS to tell items of the
// same second apart, so oldest_live is new_oldest itself: an item stored in
// the same second right after `flush_all 0` is invalid as well. A later
// flush_all replaces a pending delayed one; one already in force stays.
func (s *Store) FlushAll(delay int64) {
	s.cmdFlush.Add(1)
	s.wakeLoop()
	now64 := s.Now()
	now := clampTime(now64)
	newOldest := now
	if delay > 0 {
		newOldest = absExptime(delay, now64)
	}
	oldest := newOldest
	if !s.cfg.DisableCAS {
		oldest = max(newOldest-1, 1)
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.flushPending = 0
		if oldest > now {
			sh.flushPending = oldest
		} else {
			if !s.cfg.DisableCAS {
				sh.flushCAS = (sh.seq+1)<<sh.idBits | sh.id // the next nextCAS
				// The CAS cutoff covers every item stored before now, so
				// the time cutoff is this flush's, as memcached overwrites
				// oldest_live: an earlier flush's later one (`flush_all 1`)
				// would hide what is stored after this one for the rest of
				// its second.
				sh.flushLive = 0
			}
			sh.inForce(oldest, now, now)
		}
		sh.mu.Unlock()
	}
}

// flushSweepDelay is how long flushed items wait for a lookup before the
// reclaimer unlinks them: memcached leaves them to its LRU crawler, so a
// get right after flush_all counts get_flushed.
const flushSweepDelay = 2

// inForce makes oldest_live take effect from time at. It never moves back
// by itself: a flush that names an earlier time does not bring flushed
// items back (FlushAll clears it first where a CAS cutoff makes that safe).
func (sh *shard) inForce(oldest, at, now uint32) {
	sh.flushLive = max(sh.flushLive, oldest)
	sh.flushSweepAt, sh.flushSweeping = max(at+flushSweepDelay, now), false
}

// pullFlushed reclaims the first flushed or expired item among the
// oldest few of each of class's queues, for a store into class by shard
// sh (locked), while a flush's items may still be in place: memcached's
// LRU tails are pulled around each store, so a store soon after flush_all
// counts reclaimed (issue_183.t). Outside that window it costs callers
// one test.
func (s *Store) pullFlushed(sh *shard, class int, now uint32) {
	c := &s.slabs.classes[class]
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, qi := range [...]int{queueCold, queueWarm, queueHot, queueTemp} {
		pos := c.q[qi].tail
		for tries := 0; tries < pullTries && pos != nilLoc; tries++ {
			r := s.slabs.rec(pos)
			prev := r.prev()
			vs := s.shardOf(r)
			if vs == sh || vs.mu.TryLock() {
				done := false
				if slot := vs.slotOfRecord(int(pos)); slot >= 0 && (vs.flushed(r, now) || r.expired(now)) {
					vs.reclaimOne(r)
					vs.unlinkHeld(slot, c)
					done = true
				}
				if vs != sh {
					vs.mu.Unlock()
				}
				if done {
					return
				}
			}
			pos = prev
		}
	}
}

// reclaimOne counts the reclaim of r, an expired or flushed item about to
// be unlinked.
func (sh *shard) reclaimOne(r rec) {
	c := &sh.cls[r.class()]
	sh.st.Reclaimed++
	c.reclaimed++
	if r.bits()&recFetched == 0 {
		sh.st.ExpiredUnfetched++
		c.expiredUnfetched++
	}
}

// Reclaimer pacing: each pass looks at up to reclaimBatch index slots per lock
// hold and reclaimBudget slots per round in all, so a full sweep of a large
// store is spread over seconds and never holds a shard for long. Rounds
// come every reclaimEvery clock ticks while the store is busy, once a
// second when idle (background.go).
const (
	reclaimEvery  = 5 // clock ticks between reclaimer rounds while busy
	reclaimBatch  = 1024
	reclaimBudget = 32 * 1024
)

// reclaim sweeps index slots of shards starting at shard next, unlinking
// expired and flushed items, until budget slots were examined or every shard
// was visited once. It returns the shard to start with next time, and
// whether there is more to do soon: it reclaimed something, or the pass
// over all shards it is part of has not reached the last shard's end (a
// large store's pass takes many rounds; the next pass may wait).
func (s *Store) reclaim(next, budget int) (int, bool) {
	now := clampTime(s.Now())
	// memcached's crawler visits classes on its own only when the LRU
	// maintainer, which schedules it, runs (not under PlainLRU).
	expired := !s.noSweep.Load() && !s.cfg.PlainLRU
	wrapped, found := false, false
	for visited := 0; visited < len(s.shards) && budget > 0; visited++ {
		sh := &s.shards[next]
		sh.mu.Lock()
		before := sh.st.Reclaimed
		done, examined := sh.sweep(now, min(budget, reclaimBatch), expired, true)
		found = found || sh.st.Reclaimed != before
		sh.mu.Unlock()
		budget -= examined + 1
		if done {
			next = (next + 1) % len(s.shards)
			if next == 0 {
				wrapped = true
				break
			}
		}
	}
	return next, found || !wrapped
}

// sweep examines up to n index slots from the shard's cursor, unlinking
// flushed items and, if expired is set, expired ones; with checked set it
// counts the items it looks at (crawler_items_checked). It reports whether
// the shard has nothing more to sweep for now (it has reached the table's
// end or has nothing that can expire) and how many slots it examined.
func (sh *shard) sweep(now uint32, n int, expired, checked bool) (done bool, examined int) {
	if p := sh.flushPending; p != 0 && p <= now {
		sh.flushPending = 0
		sh.inForce(p, p, now)
	}
	pendingFlush := sh.flushSweepAt != 0 && sh.flushSweepAt <= now
	if (sh.expiring == 0 || !expired) && !pendingFlush {
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
		if checked {
			sh.cls[r.class()].crawlerChecked++
		}
		// An expired item stored or read in this second is left for a
		// later pass: one stored already expired must still be found by
		// the get that follows (get_expired), as memcached's slower
		// crawler leaves it. Flushed items go at once.
		if !sh.flushed(r, now) && (!expired || !r.expired(now) || r.accessed() >= now) {
			i++
			continue
		}
		sh.reclaimOne(r)
		sh.cls[r.class()].crawlerReclaimed++
		// Removal shifts a later entry into slot i: look at i again.
		sh.unlink(int(i))
	}
	if int(i) >= len(ix.slots) {
		sh.cursor = 0
		if pendingFlush {
			sh.flushSweepAt, sh.flushSweeping = 0, false
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
		// memcached's crawl looks at every item of the classes it crawls;
		// the sweep below skips a shard with nothing that can expire.
		for c := range sh.cls {
			sh.cls[c].crawlerChecked += sh.cls[c].items
		}
		if sh.flushSweepAt > now {
			// An explicit crawl reclaims flushed items at once, as memcached's crawler does.
			sh.flushSweepAt, sh.flushSweeping = now, true
		}
		sh.mu.Unlock()
		for done := false; !done; {
			sh.mu.Lock()
			done, _ = sh.sweep(now, reclaimBatch, true, false)
			sh.mu.Unlock()
		}
	}
}

// SetCrawler turns the reclaimer's sweep of expired items on or off, as
// `lru_crawler enable` and `disable` (and -o no_lru_crawler or no_modern at
// start) turn memcached's LRU crawler; without the LRU maintainer
// (PlainLRU) it stays off, as no one schedules memcached's crawls then.
// With it off an expired item stays, holding its chunk and counted in
// curr_items and used_chunks, until a lookup meets it or an LRU tail pull
// reclaims it for a store that needs room, as in memcached (lru-crawler.t
// counts the chunks of 1 s items after they expired). Flushed items are
// still swept flushSweepDelay seconds after the flush: memcached's tail
// pulls reclaim them as stores need room; sweeping them keeps the store's
// flush window short.
func (s *Store) SetCrawler(on bool) { s.noSweep.Store(!on) }

// CountFlush counts a flush_all that was refused (-F) in cmd_flush, as
// memcached counts it.
func (s *Store) CountFlush() { s.cmdFlush.Add(1) }

// CancelFlush drops a pending delayed flush_all and invalidates nothing: what
// memcached does for a flush_all whose absolute time lies before the server
// started (memcached would also bring back flushed items no one has met
// yet; a flush in force stays in force here). It counts in cmd_flush.
func (s *Store) CancelFlush() {
	s.cmdFlush.Add(1)
	s.wakeLoop()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.flushPending = 0
		sh.mu.Unlock()
	}
}
