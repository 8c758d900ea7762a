package store

import "time"

// A maintainer pass used to run as one stretch on the CPU: under a steady
// read load every juggle finds its WARM tail active and moves it, so a pass
// over all classes made thousands of pulls and held a CPU for 0.3-0.8 ms,
// every clockTick. A reactor woken meanwhile on that CPU waited for the
// stretch to end (the scheduler lets a running thread finish its slice),
// and the requests it was woken for paid that wait in their latency tail.
// memcached's maintainer makes the same moves; the pacer makes them in
// slices of pacerBudget pulls, sleeping pacerPause between slices with the
// class lock released, so no stretch of maintenance takes more than some
// tens of microseconds. What a pass does is unchanged; only when.
const (
	pacerBudget = 64               // juggle steps per slice (each pulls from one to three queues)
	pacerPause  = time.Millisecond // between slices (the runtime's timers are no finer when idle)
)

// pacer spreads one maintainer pass over time (see above). A nil pacer
// never pauses: tests and callers that want a pass done at once use it.
type pacer struct {
	left   int    // juggle steps left in this slice
	pauses int    // pauses made so far
	wait   func() // sleeps between slices, with no lock held
}

// newPacer paces with real pauses of pacerPause, cut short once stop is
// closed (the store is closing: finish the pass at once).
func newPacer(stop <-chan struct{}) *pacer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &pacer{left: pacerBudget, wait: func() {
		t.Reset(pacerPause)
		select {
		case <-t.C:
		case <-stop:
			if !t.Stop() {
				<-t.C
			}
		}
	}}
}

// pull counts one juggle step in class c, whose lock the caller holds.
// When the slice's budget is spent it releases the lock, waits, and takes
// the lock again.
func (p *pacer) pull(c *slabClass) {
	if p == nil {
		return
	}
	if p.left--; p.left > 0 {
		return
	}
	p.left = pacerBudget
	p.pauses++
	c.mu.Unlock()
	p.wait()
	c.mu.Lock()
}
