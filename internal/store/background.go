package store

import "time"

// The background loop (one goroutine per store, until Close) turns the
// coarse clock and runs the LRU maintainer, the automover, the reclaimer
// and the hash-power check. It wakes for work, not on a fixed tick:
//
//   - the clock changes only when the wall-clock second turns (memcached's
//     clock ticks once a second), so the loop sleeps until just after the
//     next second boundary;
//   - while the store sees activity (any keyed operation, a flush, a
//     setting) or the last round found work (items moved, reclaimed, a
//     reclaimer pass unfinished, a page given back), the maintainer runs
//     every clockTick and the reclaimer every reclaimEvery ticks, as they
//     always did; an idle store runs them once a second, on the wake that
//     turns the clock, as memcached's LRU maintainer backs off to 1 s
//     sleeps and its automover decides once a second;
//   - an idle store that holds nothing sleeps until it is used (deepidle.go).
//
// Operations tell the loop about themselves through Store.busy: a load in
// the common case (the flag is already set), a write only for the first
// operation after the loop cleared it, which also wakes an idle loop so
// that the fast cadence starts within a clockTick.

// clockSlack is how long after a second boundary the loop wakes, so that
// the wall clock has surely turned when tickClock reads it.
const clockSlack = time.Millisecond

// loopState is what the background loop carries from one round to the next.
type loopState struct {
	next        int       // shard the reclaimer continues with
	lastReclaim time.Time // wall time of the last reclaimer round
	fast        bool      // the last round saw activity or found work
	pacer       *pacer    // paces the maintainer's passes (nil: no pauses)
}

// markBusy notes activity for the background loop. It costs one atomic
// load while the flag is set, which it is for the rest of the loop's
// round once any operation has set it.
func (s *Store) markBusy() {
	if !s.busy.Load() {
		s.wakeLoop()
	}
}

// wakeLoop sets the activity flag and, if this call set it, wakes an idle
// loop (a loop in its fast cadence does not listen; it comes round anyway).
func (s *Store) wakeLoop() {
	if s.busy.CompareAndSwap(false, true) {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// background runs rounds until Close.
func (s *Store) background() {
	defer close(s.done)
	l := loopState{pacer: newPacer(s.stop)}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// The first round comes when the first second turns or a clockTick
	// after the first operation, not at once: a store is filled right
	// after New, and a round then would judge its LRU by its first items.
	d := nextWake(time.Now(), false)
	for {
		kick := s.kick
		if l.fast {
			kick = nil
		} else {
			// A kick left from the fast rounds would only wake the loop
			// for nothing; one sent after the flag was cleared is seen
			// by the load that follows the drain, or stays in the channel.
			select {
			case <-s.kick:
			default:
			}
			if s.busy.Load() {
				d = min(d, clockTick)
			}
		}
		if !s.sleep(timer, d, kick) {
			return
		}
		s.wakes.Add(1)
		d = s.step(&l, time.Now())
		// step turned the clock; a deep-idle sleep leaves it to readers.
		s.clockLazy.Store(d > time.Second+clockSlack)
	}
}

// sleep waits d, or less when kick fires: activity after an idle round
// brings the next round to a clockTick from then, as a busy loop would
// have come round (the round then sees the burst, not just its first
// operation). It reports false when the store is closing.
func (s *Store) sleep(timer *time.Timer, d time.Duration, kick <-chan struct{}) bool {
	deadline := time.Now().Add(d)
	timer.Reset(d)
	for {
		select {
		case <-s.stop:
			return false
		case <-timer.C:
			return true
		case <-kick:
			kick = nil
			if time.Until(deadline) > clockTick {
				timer.Reset(clockTick)
			}
		}
	}
}

// step is one round of the loop at wall time now: it turns the clock, does
// the work due and returns how long to sleep before the next round. Tests
// call it with made-up times on a store whose loop is stopped.
func (s *Store) step(l *loopState, now time.Time) time.Duration {
	s.tickClock(now)
	active := s.busy.Swap(false)
	cnow := clampTime(s.Now())
	work := s.maintainPaced(cnow, l.pacer) > 0
	if s.flash != nil {
		if s.flushToFlash(cnow) > 0 {
			work = true
		}
		if active || work {
			s.kickCompactor() // deletes and writes change the pages
		}
	}
	if s.automoveTick(cnow) {
		work = true
	}
	if since := now.Sub(l.lastReclaim); !l.fast || since < 0 || since >= reclaimEvery*clockTick {
		var more bool
		l.next, more = s.reclaim(l.next, reclaimBudget)
		work = work || more
		s.hashExpand()
		l.lastReclaim = now
	}
	l.fast = active || work
	if !l.fast && s.quiescent() {
		return deepIdleWake
	}
	return nextWake(now, l.fast)
}

// nextWake is how long the loop sleeps after a round at now: until just
// after the next second boundary, and at most clockTick while fast.
func nextWake(now time.Time, fast bool) time.Duration {
	// (Truncate drops the monotonic reading: both times are wall times.)
	d := now.Truncate(time.Second).Add(time.Second + clockSlack).Sub(now)
	if fast {
		d = min(d, clockTick)
	}
	return d
}
