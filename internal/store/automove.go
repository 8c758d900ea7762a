package store

import (
	"math"
	"sync"
	"sync/atomic"
)

// The automover (memcached's slab_automove=1, slab_automove.c), run by the
// background loop once a second (background.go). It keeps, per class, a window of the
// last slab_automove_window seconds: whether the class evicted (and its
// share of all evictions), ran out of memory or gained pages (dirty), and
// its COLD tail's age. Then:
//   - a class with more than 2.5 pages of free chunks and a clean window
//     gives a page to the global pool (which releases it when over the
//     limit), and the next check comes on the next tick, not a second
//     later, so a freed class drains quickly;
//   - once the window has filled, the class whose items are oldest (of
//     those with more than two pages) gives a page to the one whose items
//     are youngest and that is evicting now, when the youngest age is
//     below ratio × the oldest.
//
// slab_automove=2 (memcached's aggressive mode) moves a page to any class
// that evicted since the last check, from a class with one to spare.

// automover is the automover's settings and window.
type automover struct {
	level  atomic.Uint32
	ratio  atomic.Uint64 // float64 bits
	window atomic.Int32

	mu            sync.Mutex // the fields below: one check at a time
	cur           int
	before, after []classSample  // the last check's samples, and this one's
	slots         [][]windowSlot // per class, window entries
	last          uint32         // the second of the last check
}

type windowSlot struct {
	dirty, evictedSeen bool
	evictedRatio       float64
	age                uint32
}

// SetAutomove sets slab_automove's level (0 off), ratio and window
// (seconds; memcached's slab_automove_window, at least 3).
func (s *Store) SetAutomove(level uint32, ratio float64, window int) {
	a := &s.automove
	a.level.Store(level)
	a.ratio.Store(math.Float64bits(ratio))
	if window >= 3 {
		a.window.Store(int32(window))
	}
	s.wakeLoop()
}

// automoveTick runs a check when a second has passed since the last one,
// or at once after one that sent a page to the pool. It reports whether
// the next check should come on the next tick (a page went to the pool).
func (s *Store) automoveTick(now uint32) bool {
	a := &s.automove
	level := a.level.Load()
	if level == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if now == a.last {
		return false
	}
	if src := s.reserveSource(); src > 0 && s.reassign(src, 0, false) == ReassignOK {
		return true // refill the flash tier's reserve a page a tick
	}
	src, dst := s.automoveDecide(level)
	if src > 0 && s.reassign(src, dst, false) == ReassignOK && dst == 0 {
		return true // check again on the next tick, as memcached does after a reclaim
	}
	a.last = now
	return false
}

// automoveDecide updates the window with this second's samples and picks a
// move (src 0: none).
func (s *Store) automoveDecide(level uint32) (src, dst int) {
	a := &s.automove
	window := int(a.window.Load())
	if window < 3 {
		window = 30
	}
	n := len(s.slabs.classes)
	if len(a.after) != n {
		a.after = make([]classSample, n)
	}
	after := s.sampleClasses(a.after)
	// The two sample slices trade places (every way out makes after the
	// new before), so that a check allocates nothing: an idle server runs
	// one a second.
	prev := a.before
	defer func() { a.after = prev }()
	if len(a.before) != n || len(a.slots) != n || len(a.slots[1]) != window {
		a.before, a.cur = after, 0
		a.slots = make([][]windowSlot, n)
		for i := range a.slots {
			a.slots[i] = make([]windowSlot, window)
		}
		return 0, 0
	}
	if level == 2 {
		defer func() { a.before = after }()
		for id := 1; id < n; id++ {
			if after[id].evicted > a.before[id].evicted {
				return -1, id
			}
		}
		return 0, 0
	}
	var total uint64
	for id := 1; id < n; id++ {
		if b, c := a.before[id], after[id]; c.evicted > b.evicted {
			total += c.evicted - b.evicted
		}
	}
	a.cur++
	ratio := math.Float64frombits(a.ratio.Load())
	youngest, oldest := -1, -1
	var youngAge, oldAge float64
	youngNow := false
	for id := 1; id < n; id++ {
		sl := &a.slots[id][a.cur%window]
		*sl = windowSlot{}
		b, c := a.before[id], after[id]
		if d := c.evicted - b.evicted; c.evicted > b.evicted {
			sl.evictedRatio = float64(d) / float64(total)
			sl.evictedSeen, sl.dirty = true, true
		}
		if c.oom > b.oom || c.pages > b.pages {
			sl.dirty = true
		}
		sl.age = c.coldAge
		dirty, seen, ratios, ages := false, 0, 0.0, 0.0
		for _, w := range a.slots[id] {
			dirty = dirty || w.dirty
			if w.evictedSeen {
				seen++
			}
			ratios += w.evictedRatio
			ages += float64(w.age)
		}
		age := ages / float64(window)
		if spareFree(c.free, c.perPage) && !dirty {
			a.before = after
			return id, 0
		}
		if c.pages > 2 && (oldest < 0 || age > oldAge) {
			oldest, oldAge = id, age
		}
		if (seen > window/2 || ratios/float64(window) > 0.25) && (youngest < 0 || age < youngAge) {
			youngest, youngAge, youngNow = id, age, sl.evictedSeen
		}
	}
	a.before = after
	if youngest > 0 && oldest > 0 && youngest != oldest && a.cur > window &&
		youngAge < oldAge*ratio && youngNow {
		return oldest, youngest
	}
	return 0, 0
}

// classSample is what a check reads of a class.
type classSample struct {
	evicted, oom         uint64 // summed over the shards
	pages, free, perPage int
	coldAge              uint32 // seconds COLD's tail item has gone unread
}

// sampleClasses fills dst (one entry per class id) with what a check
// needs, and nothing more: Classes would sum every counter of every shard
// and build a ClassStats per class, most of an idle server's CPU.
func (s *Store) sampleClasses(dst []classSample) []classSample {
	clear(dst)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for c := range sh.cls {
			dst[c].evicted += sh.cls[c].evicted
			dst[c].oom += sh.cls[c].outOfMemory
		}
		sh.mu.Unlock()
	}
	now := clampTime(s.Now())
	for id := 1; id < len(dst); id++ {
		c := &s.slabs.classes[id]
		c.mu.Lock()
		d := &dst[id]
		d.pages, d.free, d.perPage = c.pages, c.freeChunks(), c.perPage
		if pos := c.q[queueCold].tail; pos != nilLoc {
			d.coldAge = s.tailAge(pos, now)
		}
		c.mu.Unlock()
	}
	return dst
}

// spareFree reports whether a class with free chunks of perPage to a page
// holds more than 2.5 pages of them: enough for the automover to give one
// back once its window is clean.
func spareFree(free, perPage int) bool {
	return float64(free) > float64(perPage)*2.5
}
