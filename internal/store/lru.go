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

// A pull's outcome.
const (
	pulledNothing = iota
	pulledFreed   // a chunk went back to the class (reclaimed or evicted)
	pulledMoved   // an item moved to another queue
)

// pull looks at up to pullTries items at the tail of queue qi of class c
// (locked) and acts on the first it can: an expired or flushed item is
// reclaimed; HOT's and WARM's tail items move down to COLD (an active one
// to WARM's head instead); with evict, an active COLD item moves to WARM
// and any other is evicted (never a TEMP one, nor any under -M). sh is the allocating
// shard, locked by the caller; other shards are only tried, and an item
// whose shard is busy is skipped, as memcached skips a locked item.
func (s *Store) pull(c *slabClass, qi int, sh *shard, now uint32, evict bool) int {
	sl := s.slabs
	pos := c.q[qi].tail
	for tries := 0; tries < pullTries && pos != nilLoc; tries++ {
		r := sl.rec(pos)
		prev := r.prev()
		vs := s.shardOf(r)
		if vs != sh && !vs.mu.TryLock() {
			pos = prev
			continue
		}
		out := s.pullOne(c, qi, vs, pos, r, now, evict)
		if vs != sh {
			vs.mu.Unlock()
		}
		if out != pulledNothing {
			return out
		}
		pos = prev
	}
	return pulledNothing
}

// pullOne acts on one tail item (see pull); vs, its shard, is locked.
func (s *Store) pullOne(c *slabClass, qi int, vs *shard, pos uint64, r rec, now uint32, evict bool) int {
	slot := vs.slotOfRecord(int(pos))
	if slot < 0 || vs.pinned(int(pos)) {
		return pulledNothing // in use, as memcached skips a referenced item
	}
	cc := &vs.cls[c.id]
	if r.expired(now) || vs.flushed(r, now) {
		vs.reclaimOne(r)
		vs.unlinkHeld(slot, c)
		return pulledFreed
	}
	active := r.bits()&recReferenced != 0
	switch {
	case qi == queueTemp || vs.noEvict && qi == queueCold:
		return pulledNothing
	case qi == queueHot:
		to := queueCold
		if active {
			to = queueWarm
			r.clearBits(recReferenced)
		}
		s.slabs.move(c, to, pos)
		return pulledMoved
	case qi == queueWarm:
		// WARM's tail goes down to COLD unless read again meanwhile.
		to := queueCold
		if active {
			to = queueWarm
			r.clearBits(recReferenced)
		}
		s.slabs.move(c, to, pos)
		return pulledMoved
	case !evict:
		return pulledNothing
	case active && !vs.plainLRU:
		r.clearBits(recReferenced)
		s.slabs.move(c, queueWarm, pos)
		return pulledMoved
	}
	vs.countEviction(r, cc)
	vs.unlinkHeld(slot, c)
	return pulledFreed
}

// allocIn takes a chunk of class c for a record of size bytes for shard sh
// (locked), reclaiming and evicting at the class's tails as memcached's
// allocation does. It returns nilLoc when none could be had: the class
// holds only TEMP items, items of busy shards, or -M forbids evicting.
func (s *Store) allocIn(c *slabClass, sh *shard, size int, now uint32) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range allocTries {
		if pos := s.slabs.takeChunk(c, size); pos != nilLoc {
			return pos
		}
		if s.pull(c, queueTemp, sh, now, true) == pulledFreed {
			continue
		}
		if s.pull(c, queueCold, sh, now, true) != pulledNothing {
			continue
		}
		if s.pull(c, queueHot, sh, now, false) != pulledNothing {
			continue
		}
		if s.pull(c, queueWarm, sh, now, false) == pulledNothing {
			break
		}
	}
	return s.slabs.takeChunk(c, size)
}
