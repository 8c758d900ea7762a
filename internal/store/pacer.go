package store

import "time"

// A maintainer pass used to run as one stretch on the CPU: under a steady
// read load every juggle finds its WARM tail active and moves it, so a pass
// over all classes made hundreds of moves and held a CPU for 0.3-0.8 ms,
// every clockTick. A reactor woken meanwhile on that CPU waited for the
// stretch to end (the scheduler lets a running thread finish its slice),
// and the requests it was woken for paid that wait in their latency tail.
// memcached's maintainer makes the same moves; the pacer makes them in
// slices of at most pacerSlice, sleeping pacerPause between slices with
// the class lock released. What a pass does is unchanged; only when.
const (
	pacerSlice = 50 * time.Microsecond // longest stretch of juggling
	pacerPause = time.Millisecond      // between slices (the runtime's timers are no finer when idle)
	pacerEvery = 8                     // juggle steps between looks at the clock
)

// pacer spreads one maintainer pass over time (see above). A nil pacer
// never pauses: tests and callers that want a pass done at once use it.
type pacer struct {
	clock  func() time.Duration // monotonic time
	wait   func()               // sleeps between slices, with no lock held
	start  time.Duration        // when the current slice began (0: not yet)
	steps  int                  // juggle steps since the last look at the clock
	pauses int                  // pauses made so far
}

// monoStart anchors the pacer's monotonic clock.
var monoStart = time.Now()

// newPacer paces with real time and real pauses of pacerPause, cut short
// once stop is closed (the store is closing: finish the pass at once).
func newPacer(stop <-chan struct{}) *pacer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &pacer{
		clock: func() time.Duration { return time.Since(monoStart) },
		wait: func() {
			t.Reset(pacerPause)
			select {
			case <-t.C:
			case <-stop:
				if !t.Stop() {
					<-t.C
				}
			}
		},
	}
}

// pull counts one juggle step in class c, whose lock the caller holds.
// Once the slice has lasted pacerSlice it releases the lock, waits, and
// takes the lock again.
func (p *pacer) pull(c *slabClass) {
	if p == nil {
		return
	}
	if p.steps++; p.steps < pacerEvery {
		return
	}
	p.steps = 0
	now := p.clock()
	if p.start == 0 {
		p.start = now
		return
	}
	if now-p.start < pacerSlice {
		return
	}
	p.pauses++
	c.mu.Unlock()
	p.wait()
	c.mu.Lock()
	p.start = p.clock()
}

// endPass forgets the slice: the next pass starts a new one (the loop
// slept between passes).
func (p *pacer) endPass() {
	if p != nil {
		p.start, p.steps = 0, 0
	}
}
