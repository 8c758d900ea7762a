package bench

import (
	"runtime"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// pacer drives one connection in the open loop: requests follow the
// connection's own arrival process and go out at their scheduled times
// whether or not earlier ones were answered, up to the pipeline depth.
// Beyond it a request waits for a free slot, its latency still counted
// from its scheduled time. Each pacer sleeps on its own OS thread with a
// small timer slack, because Go's timers wake up to a millisecond late.
type pacer struct {
	c    *conn
	ia   Distribution  // inter-arrival, nanoseconds
	spin time.Duration // busy-wait this close to a send time instead of sleeping
	// lag holds how late requests left against their schedule: the
	// client's own contribution to the measured latency.
	lag     *hdrhistogram.Histogram
	batched []int64 // scheduled times of the batch being written
	// unsent counts requests scheduled inside the window that never went
	// out because the pipeline stayed full until the drain deadline.
	unsent int64
}

func (p *pacer) run(clk clock, win window, drain time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	preparePacerThread()

	c := p.c
	defer c.finish(drain)
	// Requests are scheduled up to the window's end; ones held back by a
	// full pipeline may still go out until the drain deadline.
	giveUp := time.NewTimer(time.Duration(win.end + int64(drain) - clk.now()))
	defer giveUp.Stop()
	next := int64(Sample(p.ia, c.rng)) // a random phase per connection
	for next < win.end {
		if c.isDead() {
			p.countUnsent(next, win)
			return
		}
		now := clk.now()
		if now < next {
			// Sleep, or spin through the last stretch: a sleeping thread
			// wakes some tens of µs late, which counts as latency.
			if wait := time.Duration(next - now); wait > p.spin {
				sleepPrecise(wait - p.spin)
			}
			continue
		}
		if !c.tryAcquire() {
			select { // blocks until a reply frees a slot
			case c.slots <- struct{}{}:
			case <-c.dead:
				p.countUnsent(next, win)
				return
			case <-giveUp.C:
				p.countUnsent(next, win)
				return
			}
		}
		p.batched = append(p.batched[:0], next)
		c.enqueue(next)
		next += p.gap()
		for now = clk.now(); next <= now && next < win.end && c.tryAcquire(); next += p.gap() {
			p.batched = append(p.batched, next)
			c.enqueue(next)
		}
		sentAt := clk.now()
		c.flush()
		for _, t := range p.batched {
			if win.holds(t) {
				_ = p.lag.RecordValue(min(max(sentAt-t, 1), maxLatency))
			}
		}
	}
}

func (p *pacer) gap() int64 { return max(int64(Sample(p.ia, p.c.rng)), 1) }

// countUnsent counts the window's requests from next on, which never went out.
func (p *pacer) countUnsent(next int64, win window) {
	for t := next; t < win.end; t += p.gap() {
		if win.holds(t) {
			p.unsent++
		}
	}
}

// closedLoop sends on c as fast as replies free pipeline slots.
func closedLoop(c *conn, clk clock, win window, drain time.Duration) {
	defer c.finish(drain)
	timer := time.NewTimer(time.Duration(win.end - clk.now()))
	defer timer.Stop()
	for {
		select {
		case c.slots <- struct{}{}:
		case <-c.dead:
			return
		case <-timer.C:
			return
		}
		now := clk.now()
		if now >= win.end {
			<-c.slots
			return
		}
		c.enqueue(now)
		for c.tryAcquire() {
			c.enqueue(now)
		}
		c.flush()
	}
}
