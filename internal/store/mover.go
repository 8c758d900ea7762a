package store

import (
	"sync"
	"sync/atomic"
	"time"
)

// The page mover (memcached's slab rebalancer: `slabs reassign`, and the
// automover, automove.go): it takes a class's oldest page from it and
// gives it to another class, or to the global page pool (class 0). Each
// item in the page is rescued into a free chunk of its class elsewhere if
// there is one (keeping its CAS, with a new access time, at the head of
// its queue, as memcached 1.6.45's rescue: its slabs-cas.t checks the CAS),
// dropped if expired or flushed, else
// dropped for want of room (evictions_nomem, not an eviction). An item
// whose shard is busy, that a ValueRef pins, or a chunk reserved for a
// value being received, is waited for: the walk repeats, sleeping from
// 1 µs doubling to 1 ms between walks. A page still busy after moverWalks
// walks is left with its class (memcached would unlink such items by
// force and reuse their memory under their readers; here a pinned chunk's
// bytes must stay as they are).
//
// One move runs at a time, in its own goroutine, as memcached's
// rebalancer thread: Reassign answers BUSY meanwhile.

// ReassignResult is what `slabs reassign` answers.
type ReassignResult int

const (
	ReassignOK       ReassignResult = iota
	ReassignBusy                    // a move is running
	ReassignBadClass                // src or dst out of range
	ReassignNoSpare                 // src has fewer than two pages
	ReassignSame                    // src == dst
)

// moverWalks bounds the walks over a busy page before the move gives up.
const moverWalks = 1000

// MoverStats are the mover's counters (memcached's slab_reassign_* and
// slabs_moved).
type MoverStats struct {
	Running                               bool
	Moved                                 uint64
	Rescues, ChunkRescues, EvictionsNomem uint64
	InlineReclaim, BusyItems, BusyDeletes uint64
}

type mover struct {
	mu      sync.Mutex // held for the whole of a move
	running atomic.Bool
	cursor  int // where src -1 goes on looking for a class with a spare page

	moved, rescues, evictionsNomem, inlineReclaim, busyItems atomic.Uint64
	chunkRescues                                             atomic.Uint64
	done                                                     chan struct{} // closed when the last move started ends (tests)
}

// Reassign starts moving src's oldest page to dst (0: the global page
// pool); src -1 picks a class with a spare page, round robin from the last
// pick. The checks and their order are memcached's slabs_reassign.
func (s *Store) Reassign(src, dst int) ReassignResult {
	m := &s.mover
	if !m.mu.TryLock() {
		return ReassignBusy
	}
	largest := len(s.slabs.classes) - 1
	if src == dst {
		m.mu.Unlock()
		return ReassignSame
	}
	if src == -1 {
		src = s.pickSpare(dst)
	}
	if src < 0 || src > largest || dst < 0 || dst > largest {
		m.mu.Unlock()
		return ReassignBadClass
	}
	if s.pagesOf(src) < 2 {
		m.mu.Unlock()
		return ReassignNoSpare
	}
	m.running.Store(true)
	m.done = make(chan struct{})
	go func() {
		defer m.mu.Unlock()
		defer close(m.done)
		defer m.running.Store(false)
		s.movePage(src, dst)
	}()
	return ReassignOK
}

// pickSpare is memcached's round-robin choice of a class with more than
// one page, skipping dst; -1 when there is none.
func (s *Store) pickSpare(dst int) int {
	n := len(s.slabs.classes) - 1
	for range n {
		s.mover.cursor = s.mover.cursor%n + 1
		if c := s.mover.cursor; c != dst && s.pagesOf(c) > 1 {
			return c
		}
	}
	return -1
}

// pagesOf is how many movable pages class id has; for 0, the pool's.
func (s *Store) pagesOf(id int) int {
	if id == 0 {
		_, pool := s.slabs.arena.usage()
		return pool
	}
	c := &s.slabs.classes[id]
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pageList)
}

// movePage moves one page from src to dst.
func (s *Store) movePage(src, dst int) {
	var p int
	if src == 0 {
		if p = s.slabs.arena.takePooled(); p < 0 {
			return
		}
	} else if p = s.emptyOldestPage(&s.slabs.classes[src]); p < 0 {
		return
	}
	if dst == 0 {
		s.slabs.arena.giveBack(p, 1)
		s.slabs.arena.releaseOver()
	} else {
		c := &s.slabs.classes[dst]
		c.mu.Lock()
		s.slabs.adoptFreePage(c, p)
		c.mu.Unlock()
	}
	s.mover.moved.Add(1)
}

// emptyOldestPage clears class c's oldest page of items, as the mover's
// walk does, and takes it from c. It returns the page, or -1 when the
// page stayed busy (its free chunks then go back on c's free list).
func (s *Store) emptyOldestPage(c *slabClass) int {
	c.mu.Lock()
	if len(c.pageList) < 2 {
		c.mu.Unlock()
		return -1
	}
	p := int(c.pageList[0])
	c.mu.Unlock()
	taken := make([]bool, c.perPage) // chunks off the free list for good
	sleep := time.Microsecond
	for range moverWalks {
		c.mu.Lock()
		busy := s.clearPage(c, p, taken)
		if busy == 0 {
			c.pageList = c.pageList[1:]
			c.pages--
			c.mu.Unlock()
			return p
		}
		c.mu.Unlock()
		s.mover.busyItems.Add(uint64(busy))
		time.Sleep(sleep)
		sleep = min(2*sleep, time.Millisecond)
	}
	c.mu.Lock()
	for i, t := range taken {
		if t {
			pos := uint64(p)*pageSize + uint64(i*c.size)
			r := s.slabs.rec(pos)
			r[offBits], r[offQueue] = recDead, queueFree
			r.setNext(c.free)
			c.free = pos
			c.nfree++
		}
	}
	c.mu.Unlock()
	return -1
}

// clearPage walks the chunks of page p of class c (locked): items are
// rescued or dropped, and then the page's free chunks leave the free list
// (marked in taken). It returns how many chunks are still in use: items
// whose shard is busy or that a ValueRef pins, and chunks reserved for a
// value being received.
func (s *Store) clearPage(c *slabClass, p int, taken []bool) int {
	sl := s.slabs
	start := uint64(p) * pageSize
	end := start + uint64(c.perPage*c.size)
	if c.carveLeft > 0 && c.carve >= start && c.carve < end {
		// The page's uncut chunks go with it.
		for pos := c.carve; pos < end; pos += uint64(c.size) {
			taken[(pos-start)/uint64(c.size)] = true
		}
		c.carveLeft = 0
	}
	now := clampTime(s.Now())
	for pos := start; pos < end; pos += uint64(c.size) {
		r := sl.rec(pos)
		if r.queue() == queueChunk && !taken[(pos-start)/uint64(c.size)] {
			s.clearLink(c, pos, start, end, now)
			continue
		}
		if taken[(pos-start)/uint64(c.size)] || r.queue() >= numQueues {
			continue // free, being written, reserved, or an orphan a reader pins
		}
		sh := s.shardOf(r)
		if sh.mu.TryLock() {
			s.clearItem(c, sh, pos, start, end, now)
			sh.mu.Unlock()
		}
	}
	prev := nilLoc
	for pos := c.free; pos != nilLoc; {
		next := sl.rec(pos).next()
		if pos >= start && pos < end {
			if prev == nilLoc {
				c.free = next
			} else {
				sl.rec(prev).setNext(next)
			}
			c.nfree--
			taken[(pos-start)/uint64(c.size)] = true
		} else {
			prev = pos
		}
		pos = next
	}
	busy := 0
	for _, t := range taken {
		if !t {
			busy++
		}
	}
	return busy
}

// clearItem rescues or drops the linked item at pos, in the page
// [start, end) of class c; c and the item's shard sh are locked. A pinned
// item is left for the next walk.
func (s *Store) clearItem(c *slabClass, sh *shard, pos, start, end uint64, now uint32) {
	sl := s.slabs
	r := sl.rec(pos)
	slot, to := s.rescueTarget(c, sh, pos, start, end, now)
	if to == nilLoc {
		return
	}
	nr := sl.rec(to)
	n := min(r.size(), c.size) // (a chain's head: its chunk; the links stay)
	copy(nr[:n], r[:n])
	q := r.queue()
	sl.remove(c, pos)
	nr.setAccessed(now) // (the CAS came with the copy)
	sl.push(c, q, to)
	if sl.chained(nr) {
		for link := sl.firstLink(nr); link != nilLoc; link = sl.rec(link).next() {
			sl.rec(link).setPrev(to)
		}
	}
	sh.idx.setLoc(slot, to>>3)
	sh.idx.epoch++
	sl.pushFree(c, pos) // (taken off the free list with the page's others)
	s.mover.rescues.Add(1)
}

// clearLink moves the chain link at pos, in the page [start, end) of c
// (locked), to a free chunk of c outside it, or drops its item when there
// is none. A link whose head is not linked yet (its value still being
// written), whose shard is busy or that a reader pins, is left for the
// next walk.
func (s *Store) clearLink(c *slabClass, pos, start, end uint64, now uint32) {
	sl := s.slabs
	headPos := sl.rec(pos).prev()
	head := sl.rec(headPos)
	if head.queue() >= numQueues {
		return
	}
	sh := s.shardOf(head)
	if !sh.mu.TryLock() {
		return
	}
	defer sh.mu.Unlock()
	if _, to := s.rescueTarget(c, sh, headPos, start, end, now); to != nilLoc {
		s.moveLink(c, head, pos, to)
	}
}

// rescueTarget decides the fate of the linked item at pos (a chain's head
// for a link) while the mover empties [start, end) of class c; c and the
// item's shard sh are locked. It returns the item's index slot and a free
// chunk of c outside the page to move it (or its link) to, or nilLoc: the
// item is pinned (left for the next walk), expired or flushed (dropped),
// or has nowhere to go (dropped: evictions_nomem).
func (s *Store) rescueTarget(c *slabClass, sh *shard, pos, start, end uint64, now uint32) (int, uint64) {
	r := s.slabs.rec(pos)
	slot := sh.slotOfRecord(int(pos))
	if slot < 0 || sh.pinned(int(pos)) {
		return slot, nilLoc
	}
	if r.expired(now) || sh.flushed(r, now) {
		sh.unlinkHeld(slot, c)
		return slot, nilLoc
	}
	to := s.slabs.takeFreeOutside(c, start, end)
	if to == nilLoc {
		sh.unlinkHeld(slot, c)
		s.mover.evictionsNomem.Add(1)
	}
	return slot, to
}

// moveLink copies the link at pos of the chain whose head is head to the
// free chunk to, and points its predecessor there. c is locked.
func (s *Store) moveLink(c *slabClass, head rec, pos, to uint64) {
	sl := s.slabs
	copy(sl.rec(to)[:c.size], sl.rec(pos)[:c.size])
	if first := sl.firstLink(head); first == pos {
		le.PutUint64(head[recHeader+head.klen():], to)
	} else {
		for link := first; link != nilLoc; link = sl.rec(link).next() {
			if sl.rec(link).next() == pos {
				sl.rec(link).setNext(to)
				break
			}
		}
	}
	sl.pushFree(c, pos)
	s.mover.chunkRescues.Add(1)
}

// takeFreeOutside pops a free chunk of c (locked) outside [start, end),
// or cuts one from c's newest page, never taking a new page (memcached's
// NO_NEWPAGE); nilLoc when there is none.
func (sl *slabs) takeFreeOutside(c *slabClass, start, end uint64) uint64 {
	prev := nilLoc
	for pos := c.free; pos != nilLoc; pos = sl.rec(pos).next() {
		if pos < start || pos >= end {
			if prev == nilLoc {
				c.free = sl.rec(pos).next()
			} else {
				sl.rec(prev).setNext(sl.rec(pos).next())
			}
			c.nfree--
			return pos
		}
		prev = pos
	}
	if c.carveLeft > 0 {
		pos := c.carve
		c.carve += uint64(c.size)
		c.carveLeft--
		return pos
	}
	return nilLoc
}

// adoptFreePage gives page p to class c (locked), cut into free chunks
// (the highest address first, as memcached's split leaves them).
func (sl *slabs) adoptFreePage(c *slabClass, p int) {
	sl.arena.setOwner(p, c.id)
	start := uint64(p) * pageSize
	for i := range c.perPage {
		pos := start + uint64(i*c.size)
		sl.pushFree(c, pos)
	}
	c.pages++
	c.pageList = append(c.pageList, int32(p))
}

// MoverStats reports the mover's counters.
func (s *Store) MoverStats() MoverStats {
	m := &s.mover
	return MoverStats{Running: m.running.Load(), Moved: m.moved.Load(), Rescues: m.rescues.Load(), ChunkRescues: m.chunkRescues.Load(),
		EvictionsNomem: m.evictionsNomem.Load(), InlineReclaim: m.inlineReclaim.Load(), BusyItems: m.busyItems.Load()}
}
