package store

import "time"

// Deep idle: a store that holds no items has nothing the background loop
// could do as time passes. No item can age, expire or be moved, no class
// holds enough free pages for the automover to give one back, and there
// is no flash tier (whose writer and compactor keep their own time). Its
// once-a-second round would only turn the clock, and on a virtual machine
// each wake-up of a Go program costs some hundreds of microseconds (the
// timer's thread, the thread the runtime wakes to look for more work, its
// monitor), the bulk of an idle server's CPU. So the loop then sleeps until
// something happens (an operation, a setting, Close) or deepIdleWake has
// passed, and the clock turns lazily: while clockLazy is set, Now reads the
// real time itself, which only the rare reader of an idle store (stats,
// a first request) pays for. An operation wakes the loop, which turns the
// clock and clears the flag within a clockTick.
//
// memcached's LRU maintainer sleeps up to a second at a time whatever the
// store holds; with items in the store gocached keeps that cadence too.

// deepIdleWake bounds a deep-idle sleep: a safety net only, as nothing the
// loop does can come due while the store stays empty and untouched.
const deepIdleWake = time.Minute

// quiescent reports whether nothing can come due in s without an
// operation: no items, no flash tier, and no class with free pages the
// automover would give back (spareFree, over any window).
func (s *Store) quiescent() bool {
	if s.flash != nil {
		return false
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n := sh.idx.count
		sh.mu.Unlock()
		if n != 0 {
			return false
		}
	}
	for id := 1; id < len(s.slabs.classes); id++ {
		c := &s.slabs.classes[id]
		c.mu.Lock()
		spare := spareFree(c.freeChunks(), c.perPage)
		c.mu.Unlock()
		if spare {
			return false
		}
	}
	return true
}

// catchUpClock turns the clock to the real time now for a reader while the
// loop sleeps without turning it. Readers race, so it only moves the clock
// forward, and only when the real second has passed the one the clock was
// last set from (a debugtime jump still lasts until the second turns).
func (s *Store) catchUpClock(now time.Time) {
	if s.debugTime.paused.Load() {
		return
	}
	sec := now.Unix()
	for {
		last := s.debugTime.lastSec.Load()
		if last >= sec {
			return
		}
		if s.debugTime.lastSec.CompareAndSwap(last, sec) {
			break
		}
	}
	v := sec + s.debugTime.shift.Load()
	for {
		c := s.clock.Load()
		if c >= v || s.clock.CompareAndSwap(c, v) {
			return
		}
	}
}
