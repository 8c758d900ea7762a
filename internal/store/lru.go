package store

import "github.com/cespare/xxhash/v2"

// Each slab class keeps its items in memcached's segmented LRU queues,
// doubly linked through the records' headers (arena offsets, no pointers):
// new items enter HOT; items stored to live at most temporary_ttl seconds
// enter TEMP, which is never evicted (templru.go). A read only sets bits on
// the item (markRead), so reads never take a class lock; the tail pulls
// below act on them: an active item at COLD's tail moves to WARM instead
// of being evicted, and an allocation that finds nothing to evict in COLD
// moves HOT's tail down to COLD first, as memcached's do_item_alloc_pull
// does.
const (
	queueHot = iota
	queueWarm
	queueCold
	queueTemp
	numQueues
)

type lruQueue struct {
	head, tail uint64 // arena offsets; nilLoc when empty
	items      int
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
// over, as memcached passes an item whose lock it cannot take. An item a
// ValueRef pins may be evicted: its chunk comes back on release. It
// returns how many items it removed or moved.
func (s *Store) pull(c *slabClass, qi int, sh *shard, now uint32, evict bool) int {
	sl := s.slabs
	removed := 0
	pos := c.q[qi].tail
	for tries := 0; tries < pullTries && pos != nilLoc; tries++ {
		r := sl.rec(pos)
		prev := r.prev()
		vs := s.shardOf(r)
		if vs != sh && !vs.mu.TryLock() {
			pos = prev
			continue
		}
		done := s.pullOne(c, qi, vs, pos, r, now, evict, &removed)
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
func (s *Store) pullOne(c *slabClass, qi int, vs *shard, pos uint64, r rec, now uint32, evict bool, removed *int) bool {
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
	case queueHot:
		to := queueCold
		if active {
			to = queueWarm
			r.clearBits(recReferenced)
		}
		s.slabs.move(c, to, pos)
		*removed++
	case queueCold:
		switch {
		case evict && !vs.noEvict:
			vs.countEviction(r, &vs.cls[c.id])
			vs.unlinkHeld(slot, c)
			*removed++
		case !evict && active && !vs.plainLRU:
			r.clearBits(recReferenced)
			s.slabs.move(c, queueWarm, pos)
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
func (s *Store) allocIn(c *slabClass, sh *shard, size int, now uint32) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range allocTries {
		if pos := s.slabs.takeChunk(c, size); pos != nilLoc {
			return pos
		}
		if s.pull(c, queueCold, sh, now, true) == 0 {
			s.pull(c, queueHot, sh, now, false)
		}
	}
	return nilLoc
}
