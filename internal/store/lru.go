package store

import "github.com/cespare/xxhash/v2"

// Each slab class keeps its items in memcached's segmented LRU queues,
// doubly linked through the records' headers (arena offsets, no pointers):
// new items enter HOT; items stored to live at most temporary_ttl seconds
// enter TEMP, which is never evicted (templru.go). A read mostly only sets
// bits on the item (markRead), which the tail pulls below act on; only an
// item made active while in COLD is moved to WARM by the read itself, if
// its class lock is free (bumpFromCold, memcached's lru_bump_async). An
// active item at COLD's tail moves to WARM instead of being evicted, and
// an allocation that finds nothing to evict in COLD moves HOT's tail down
// to COLD first, as memcached's do_item_alloc_pull does.
const (
	queueHot = iota
	queueWarm
	queueCold
	queueTemp
	numQueues
	// A chunk in no queue says why in the same byte, written under its
	// class's lock, so the page mover can tell without the item's shard:
	queueFree = 0xfe // on the free list, or not handed out yet
	queueNone = 0xff // handed out and not linked: being written, reserved, or pinned after an unlink
)

type lruQueue struct {
	head, tail uint64 // arena offsets; nilLoc when empty
	items      int
	bytes      int64 // memcached's sizes of the items (ITEM_ntotal), for the maintainer's limits
}

// push puts the record at pos at the head of queue qi. c is locked.
func (sl *slabs) push(c *slabClass, qi int, pos uint64) {
	r := sl.rec(pos)
	q := &c.q[qi]
	r[offQueue] = uint8(qi)
	r.setPrev(nilLoc)
	r.setNext(q.head)
	if q.head != nilLoc {
		sl.rec(q.head).setPrev(pos)
	} else {
		q.tail = pos
	}
	q.head = pos
	q.items++
	q.bytes += int64(r.mcSize(sl.noCAS))
}

// remove takes the record at pos out of its queue. c is locked.
func (sl *slabs) remove(c *slabClass, pos uint64) {
	r := sl.rec(pos)
	q := &c.q[r.queue()]
	p, n := r.prev(), r.next()
	if p != nilLoc {
		sl.rec(p).setNext(n)
	} else {
		q.head = n
	}
	if n != nilLoc {
		sl.rec(n).setPrev(p)
	} else {
		q.tail = p
	}
	q.items--
	q.bytes -= int64(r.mcSize(sl.noCAS))
}

// move takes the record at pos to the head of queue qi. c is locked.
func (sl *slabs) move(c *slabClass, qi int, pos uint64) {
	sl.remove(c, pos)
	sl.push(c, qi, pos)
}

// pullTries is how many items at a queue's tail one pull looks at, as
// memcached's lru_pull_tail looks at five.
const pullTries = 5

// allocTries bounds the pulls one allocation makes, as memcached's
// do_item_alloc_pull tries ten times.
const allocTries = 10

// shardOf returns the shard of the live record r.
func (s *Store) shardOf(r rec) *shard {
	return &s.shards[xxhash.Sum64(r.key())&s.shardMask]
}

// pull is memcached's lru_pull_tail on queue qi of class c (locked): it
// looks at up to pullTries items from the tail. An expired or flushed item
// is reclaimed and the walk goes on; the first other item ends it: HOT's
// tail moves to WARM if active (its bit cleared), else down to COLD;
// COLD's is evicted with evict (not under -M), or else moves to WARM if
// active; TEMP's stays. sh is the allocating shard, locked by the caller;
// other shards are only tried, and an item whose shard is busy is passed
// over, as memcached passes an item whose lock it cannot take (or that
// `debugitem lock` holds, debugitem.go). An item a
// ValueRef pins may be evicted: its chunk comes back on release. It
// returns how many items it removed or moved.
func (s *Store) pull(c *slabClass, qi int, sh *shard, now uint32, evict bool) int {
	return s.pullLimited(c, qi, sh, now, evict, 0, 0)
}

// pullLimited is pull with the maintainer's limits for HOT and WARM: an
// inactive tail item moves down to COLD only while the queue holds more
// than limit bytes or the item was last read more than maxAge seconds ago
// (limit 0 and maxAge 0: always).
func (s *Store) pullLimited(c *slabClass, qi int, sh *shard, now uint32, evict bool, limit int64, maxAge uint32) int {
	sl := s.slabs
	removed := 0
	pos := c.q[qi].tail
	for tries := 0; tries < pullTries && pos != nilLoc; tries++ {
		r := sl.rec(pos)
		prev := r.prev()
		vs := s.shardOf(r)
		if s.debugLocked(r.key()) || vs != sh && !vs.mu.TryLock() {
			pos = prev
			continue
		}
		done := s.pullOne(c, qi, vs, pos, r, now, evict, limit, maxAge, &removed)
		if vs != sh {
			vs.mu.Unlock()
		}
		if done {
			break
		}
		pos = prev
	}
	return removed
}

// pullOne acts on one tail item (see pull) and reports whether the walk
// ends there; vs, its shard, is locked.
func (s *Store) pullOne(c *slabClass, qi int, vs *shard, pos uint64, r rec, now uint32, evict bool, limit int64, maxAge uint32, removed *int) bool {
	slot := vs.slotOfRecord(int(pos))
	if slot < 0 {
		return false // (cannot happen: queued records are indexed)
	}
	if e := r.exptime(); e != 0 && e < now || vs.flushed(r, now) {
		vs.reclaimOne(r)
		vs.unlinkHeld(slot, c)
		*removed++
		return false
	}
	active := r.bits()&recReferenced != 0
	switch qi {
	case queueHot, queueWarm:
		switch {
		case active:
			r.clearBits(recReferenced)
			s.slabs.move(c, queueWarm, pos)
			if qi == queueHot {
				c.movesToWarm++
			} else {
				c.movesWithinLRU++
			}
			*removed++
		case limit == 0 && maxAge == 0 || c.q[qi].bytes > limit || now-min(now, r.accessed()) > maxAge:
			s.slabs.move(c, queueCold, pos)
			c.movesToCold++
			*removed++
		}
	case queueCold:
		switch {
		case evict && !vs.noEvict:
			vs.countEviction(r, &vs.cls[c.id], now)
			vs.unlinkHeld(slot, c)
			*removed++
		case !evict && active && !vs.flat():
			r.clearBits(recReferenced)
			s.slabs.move(c, queueWarm, pos)
			c.movesToWarm++
			*removed++
		}
	}
	return true
}

// allocIn takes a chunk of class c for a record of size bytes for shard sh
// (locked), as memcached's do_item_alloc_pull: up to allocTries times, a
// free chunk or a new page, else an eviction at COLD's tail, else HOT's
// tail moved down. WARM and TEMP are left to the maintainer. It returns
// nilLoc when none could be had.
func (s *Store) allocIn(c *slabClass, sh *shard, now uint32) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.takeOrPull(c, sh, now)
}

// takeOrPull is allocIn with c locked.
func (s *Store) takeOrPull(c *slabClass, sh *shard, now uint32) uint64 {
	for try := range allocTries {
		if pos := s.slabs.takeChunk(c); pos != nilLoc {
			c.directReclaims += uint64(try)
			return pos
		}
		if s.pull(c, queueCold, sh, now, true) == 0 && !sh.flat() {
			s.pull(c, queueHot, sh, now, false)
		}
	}
	c.directReclaims += allocTries
	return nilLoc
}

// The maintainer (memcached's LRU maintainer thread) juggles every class
// on each round of the background loop (background.go): HOT is trimmed to hotPct of the class's queued bytes
// and to items read within a fifth of COLD's tail age, WARM to warmPct
// and twice that age, each moving inactive tail items down to COLD (an
// active one up to WARM's head); COLD's tail gives active items back to
// WARM; and expired or flushed items met on the way are reclaimed.
const maxJuggles = 500

// noAgeLimit as pullLimited's maxAge moves items by size only.
const noAgeLimit = ^uint32(0)

// lruTuning is memcached's LRU settings: hot_lru_pct, warm_lru_pct,
// hot_max_factor and warm_max_factor (-o, or `lru tune` at run time), and
// whether the LRU is flat (-o no_lru_maintainer, no_modern, or `lru mode
// flat`): one queue per class, a read moving an item up at most once a
// minute.
type lruTuning struct {
	HotPct, WarmPct       uint32
	HotFactor, WarmFactor float64
	Flat                  bool
}

// defaultLRUTuning is memcached's.
var defaultLRUTuning = lruTuning{HotPct: 20, WarmPct: 40, HotFactor: 0.2, WarmFactor: 2.0}

// SetLRUTuning sets the LRU's percentages and age factors and whether it
// is flat, for items stored and juggled from then on.
func (s *Store) SetLRUTuning(hotPct, warmPct uint32, hotFactor, warmFactor float64, flat bool) {
	s.hooks.lru.Store(&lruTuning{HotPct: hotPct, WarmPct: warmPct, HotFactor: hotFactor, WarmFactor: warmFactor, Flat: flat})
	s.wakeLoop()
}

// flat reports whether the LRU is flat now.
func (sh *shard) flat() bool { return sh.hooks.lru.Load().Flat }

// maintain juggles each class once. It returns how many items it moved or
// reclaimed: the background loop keeps its fast cadence while there are any.
func (s *Store) maintain(now uint32) int { return s.maintainPaced(now, nil) }

// maintainPaced is maintain with its pulls paced by p (pacer.go; nil: at
// once).
func (s *Store) maintainPaced(now uint32, p *pacer) int {
	if s.cfg.PlainLRU || s.hooks.lru.Load().Flat {
		return 0 // (memcached's flat LRU has no queues to juggle)
	}
	s.juggles.Add(1)
	defer p.endPass()
	moved := 0
	for id := 1; id < len(s.slabs.classes); id++ {
		moved += s.juggle(&s.slabs.classes[id], now, p)
	}
	return moved
}

// juggle is lru_maintainer_juggle for one class; it returns how many items
// it moved or reclaimed. p paces its pulls (nil: none); a pause releases
// the class lock, so each pull starts again from the queue's tail as it is
// then.
func (s *Store) juggle(c *slabClass, now uint32, p *pacer) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.q[queueHot].items+c.q[queueWarm].items+c.q[queueCold].items+c.q[queueTemp].items == 0 {
		return 0
	}
	moves := 0
	for range maxJuggles {
		p.pull(c)
		n := s.pullLimited(c, queueTemp, nil, now, false, 0, 0)
		if n == 0 {
			break
		}
		moves += n
	}
	// COLD's tail age sets HOT's and WARM's age limits (0 when COLD is
	// empty, as memcached takes it). When the tail's shard is busy, a
	// client storing there right now, its age is unknown and this round
	// moves by size only: taking it as 0 would send every WARM item read
	// more than a second ago down to COLD, to be evicted with it, which a
	// loaded machine made happen to lru-maintainer.t's canary.
	coldAge, ageKnown := uint32(0), true
	if t := c.q[queueCold].tail; t != nilLoc {
		r := s.slabs.rec(t)
		if sh := s.shardOf(r); sh.mu.TryLock() {
			coldAge = now - min(now, r.accessed())
			sh.mu.Unlock()
		} else {
			ageKnown = false
		}
	}
	tu := s.hooks.lru.Load()
	total := c.q[queueHot].bytes + c.q[queueWarm].bytes + c.q[queueCold].bytes
	hotLimit := max(total*int64(tu.HotPct)/100, 1)
	warmLimit := max(total*int64(tu.WarmPct)/100, 1)
	hotAge, warmAge := uint32(float64(coldAge)*tu.HotFactor), uint32(float64(coldAge)*tu.WarmFactor)
	if !ageKnown {
		hotAge, warmAge = noAgeLimit, noAgeLimit
	}
	for range maxJuggles {
		p.pull(c)
		moved := s.pullLimited(c, queueHot, nil, now, false, hotLimit, hotAge)
		if moved == 0 {
			moved = s.pullLimited(c, queueWarm, nil, now, false, warmLimit, warmAge)
		}
		moved += s.pull(c, queueCold, nil, now, false)
		if moved == 0 {
			break
		}
		moves += moved
	}
	return moves
}
