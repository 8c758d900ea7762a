package store

import (
	"sync"
	"sync/atomic"
	"time"
)

// The page mover (memcached's slab rebalancer: `slabs reassign`, and the
// automover, automove.go): it takes a class's oldest page from it and
// gives it to another class, or to the global page pool (class 0), as
// memcached 1.6.45's slabs_mover.c does. It walks the page's chunks
// (mover_walk.go): each live item is rescued into a free chunk of its
// class outside the page (keeping its CAS, at the head of its queue: its
// slabs-cas.t checks the CAS), an expired or flushed one is dropped. An
// item is never dropped for want of room: the mover counts it
// (busy_nomem) and walks the page again, and to make room it evicts at
// its class's LRU tail (mover_room.go), counted as evictions. An item it
// cannot have now (its shard busy, its key under `debugitem lock`, a
// chunk being written or reserved, or pinned by a reader) keeps the page
// busy: the walk repeats, sleeping 1 µs doubling to 5 ms between walks,
// for as long as it takes, as in memcached. A pinned item is copied out
// ("active rescue") and its old chunk waited for: a pinned chunk keeps its
// bytes until its last reader lets go. Close ends a move under way.
//
// One move runs at a time, as memcached's rebalancer thread: Reassign
// answers BUSY meanwhile. Its first walks run on Reassign's caller (a page
// of ready items is moved before the reply); a page with busy items goes
// on in the move's own goroutine.

// ReassignResult is what `slabs reassign` answers.
type ReassignResult int

const (
	ReassignOK       ReassignResult = iota
	ReassignBusy                    // a move is running
	ReassignBadClass                // src or dst out of range
	ReassignNoSpare                 // src has fewer than two pages
	ReassignSame                    // src == dst
)

// MoverStats are the mover's counters (memcached's slab_reassign_*,
// slabs_moved). Those of a move are added when it ends, as memcached's,
// but for BusyItems and LastBusyStatus, which each busy walk updates.
type MoverStats struct {
	Running                              bool
	Moved                                uint64
	Rescues, ChunkRescues, InlineReclaim uint64
	BusyItems, BusyDeletes, BusyNomem    uint64
	LastBusyStatus                       string // memcached's name; "none" before any walk was busy
}

type mover struct {
	mu     sync.Mutex // held by the move running
	cursor int        // where src -1 goes on looking for a class with a spare page
	abort  atomic.Bool

	statMu sync.Mutex // the fields below, so that a reader sees a move's end whole
	st     MoverStats
	done   chan struct{} // closed when the last move started has ended, its goroutine gone
}

// Reassign starts moving src's oldest page to dst (0: the global page
// pool), as `slabs reassign` does: the mover may evict to make room.
// src -1 picks a class with a spare page, round robin from the last pick.
// The checks and their order are memcached's slabs_reassign.
func (s *Store) Reassign(src, dst int) ReassignResult { return s.reassign(src, dst, true) }

// reassign is Reassign; the automover's moves may evict only once the
// move is stuck and memory is full (evict false).
//
// The move's first walk over the page runs here, on the caller's
// goroutine: a page of items ready to move (the common case) is moved
// before the caller answers, as memcached's rebalancer thread, woken at
// once, has moved it well before a client can ask again (slabs_reassign.t
// reassigns twice in a row and expects OK both times). The work is one
// page's walk, bounded; only a page with busy items goes on in the
// mover's goroutine, sleeping between walks, and answers BUSY meanwhile.
func (s *Store) reassign(src, dst int, evict bool) ReassignResult {
	m := &s.mover
	m.statMu.Lock()
	r := s.reassignChecks(&src, dst)
	if r != ReassignOK {
		m.statMu.Unlock()
		return r
	}
	m.st.Running = true
	done := make(chan struct{})
	m.done = done
	m.statMu.Unlock()

	m.mu.Lock() // released by whoever ends the move
	mv, p, finished := s.firstWalk(src, evict)
	if finished {
		s.endMove(mv, p, dst)
		m.mu.Unlock()
		close(done)
		return ReassignOK
	}
	go func() {
		defer close(done)
		defer m.mu.Unlock()
		s.endMove(mv, s.emptyPage(mv), dst)
	}()
	return ReassignOK
}

// reassignChecks are memcached's slabs_reassign checks, in its order, with
// the mover's statMu held; src -1 becomes the class picked.
func (s *Store) reassignChecks(src *int, dst int) ReassignResult {
	if s.mover.st.Running {
		return ReassignBusy
	}
	largest := len(s.slabs.classes) - 1
	if *src == dst {
		return ReassignSame
	}
	if *src == -1 {
		*src = s.pickSpare(dst)
	}
	if *src < 0 || *src > largest || dst < 0 || dst > largest {
		return ReassignBadClass
	}
	if s.pagesOf(*src) < 2 {
		return ReassignNoSpare
	}
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

// firstWalk takes the page to move from src: the pool's next page, or
// src's oldest page after one walk over it. finished reports that the
// move needs no more walks: p is the page emptied, or -1 when there was
// none to take; otherwise mv is the move for emptyPage to go on with.
func (s *Store) firstWalk(src int, evict bool) (mv *pageMove, p int, finished bool) {
	if src == 0 {
		return nil, s.slabs.arena.takePooled(), true
	}
	mv = s.startMove(&s.slabs.classes[src], evict)
	if mv == nil {
		return nil, -1, true
	}
	left := mv.c.perPage + 1
	for range inlineWalks {
		empty, now := s.walkOnce(mv)
		if empty {
			return mv, mv.page, true
		}
		if now >= left {
			break // the walk freed nothing: items busy for now
		}
		left = now
	}
	return mv, -1, false
}

// inlineWalks bounds the walks the caller of reassign makes while each
// frees chunks (a rescue needing room from an eviction made in the same
// walk, an item freed behind the walk), as memcached's rebalancer walks
// again at once while no item was busy; each walk is one page's work.
const inlineWalks = 8

// endMove hands page p (-1: none) to dst and then publishes the move's
// counters and its end.
func (s *Store) endMove(mv *pageMove, p, dst int) {
	if p >= 0 {
		if dst == 0 {
			s.slabs.arena.giveBack(p, 1)
			s.slabs.arena.releaseOver()
		} else {
			c := &s.slabs.classes[dst]
			c.mu.Lock()
			s.slabs.adoptFreePage(c, p)
			c.mu.Unlock()
		}
	}
	m := &s.mover
	m.statMu.Lock()
	defer m.statMu.Unlock()
	if mv != nil {
		m.st.Rescues += mv.rescues
		m.st.ChunkRescues += mv.chunkRescues
		m.st.InlineReclaim += mv.inlineReclaim
		m.st.BusyDeletes += mv.busyDeletes
		m.st.BusyNomem += mv.busyNomem
	}
	if p >= 0 {
		m.st.Moved++
	}
	m.st.Running = false
}

// walkOnce is one walk over mv's page. It reports whether the page is
// empty now, then taken from its class; otherwise it counts the busy
// items it met. left is how many of the page's chunks are not free yet.
func (s *Store) walkOnce(mv *pageMove) (empty bool, left int) {
	c := mv.c
	c.mu.Lock()
	busy, left, status := s.walkPage(mv)
	if busy == 0 && left == 0 {
		s.finishMove(mv)
		c.mu.Unlock()
		return true, 0
	}
	c.mu.Unlock()
	m := &s.mover
	m.statMu.Lock()
	m.st.BusyItems += uint64(busy)
	m.st.LastBusyStatus = status.String()
	m.statMu.Unlock()
	mv.loops++
	return false, left
}

// emptyPage goes on walking mv's page, after a first walk found items
// it could not have yet, until every chunk in it is free (mover_walk.go)
// and takes it from its class; it returns the page, or -1 when the move
// was ended (Close) first, its chunks then going back to the class.
func (s *Store) emptyPage(mv *pageMove) int {
	sleep := time.Microsecond
	for {
		select {
		case <-s.stop:
		case <-time.After(sleep):
		}
		if s.closed() || s.mover.abort.Load() {
			mv.c.mu.Lock()
			s.abandonMove(mv)
			mv.c.mu.Unlock()
			return -1
		}
		if empty, _ := s.walkOnce(mv); empty {
			return mv.page
		}
		sleep = min(2*sleep, moverMaxSleep)
	}
}

// moverMaxSleep is memcached's backoff_max between busy walks.
const moverMaxSleep = 5 * time.Millisecond

// closed reports whether Close has begun.
func (s *Store) closed() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
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
	m.statMu.Lock()
	defer m.statMu.Unlock()
	st := m.st
	if st.LastBusyStatus == "" {
		st.LastBusyStatus = moveNone.String()
	}
	return st
}
