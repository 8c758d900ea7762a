package store

import (
	"sync/atomic"
	"time"
)

// debugClock is the state of memcached-debug's `debugtime` command, which
// memcached's own tests use to move time without sleeping: a shift added to
// the real clock at every tick, and a pause that stops the ticks.
type debugClock struct {
	shift   atomic.Int64 // seconds added to the real time
	paused  atomic.Bool
	lastSec atomic.Int64 // the real second the clock was last set from
}

// tickClock sets the coarse clock from the real time now, shifted, unless
// the clock is paused. It writes only when the real second has turned:
// memcached's clock ticks once a second, so a debugtime jump lasts until
// then, and memcached's tests (expirations.t) read items stored during the
// jump before it ends. The background loop also runs more often than once
// a second while the store is busy, so without this a jump would be undone
// within one round.
func (s *Store) tickClock(now time.Time) {
	if s.debugTime.paused.Load() {
		return
	}
	sec := now.Unix()
	if s.debugTime.lastSec.Swap(sec) == sec {
		return
	}
	s.clock.Store(sec + s.debugTime.shift.Load())
}

// ShiftClock is `debugtime N`: the clock runs N seconds further ahead (or
// behind) from now on. As memcached-debug does, the clock also jumps by the
// whole accumulated shift at once (a second shift of 4 after one of 3 jumps
// it by 7 until the next tick); memcached's tests are written against that.
// A store whose Config.Now is set keeps that time source.
func (s *Store) ShiftClock(seconds int64) {
	total := s.debugTime.shift.Add(seconds)
	s.clock.Add(total)
	s.wakeLoop() // expiry and delayed flushes follow the new time soon
}

// PauseClock is `debugtime p` (true) and `debugtime r` (false): while
// paused, the clock stands still, shifts still apply.
func (s *Store) PauseClock(paused bool) {
	s.debugTime.paused.Store(paused)
	s.wakeLoop()
}
