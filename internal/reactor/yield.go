package reactor

import (
	"runtime"
	"time"
)

// YieldEvery is how often the epoll engine's reactor loop, on a locked OS
// thread, gives the Go scheduler a turn. (The io_uring loop does not; see
// its run.)
//
// Why: the scheduler counts a goroutine that has run for 10 ms without being
// rescheduled as long-running. sysmon then takes its P away whenever it finds
// it inside a system call, even with idle Ps to spare, and asks for it to be
// preempted. A reactor loop never reschedules on its own, so after its
// first 10 ms every epoll_wait that slept past a sysmon
// tick lost its P: the wake-up had to get one back and woke sysmon, which
// then kept polling every 20 µs. Measured on one epoll reactor at 500
// requests/s: 380 P hand-offs and 1,576 sysmon wake-ups a second, 2.9 % of
// a CPU spent in sysmon alone. A runtime.Gosched every 5 ms of activity
// starts a new scheduling tick before that happens, for the price of one
// hand-off of the locked thread per 5 ms (sysmon then: 232 wake-ups/s,
// 0.6 %). An idle loop does not yield; losing its P once per sleep costs
// nothing worth saving.
const YieldEvery = 5 * time.Millisecond

// Yielder tells a reactor loop when to yield (see YieldEvery). The zero
// value yields at the first call.
type Yielder struct{ last time.Time }

// Maybe yields to the Go scheduler if YieldEvery has passed since the last
// yield; now is the loop's current time.
func (y *Yielder) Maybe(now time.Time) {
	if now.Sub(y.last) < YieldEvery {
		return
	}
	runtime.Gosched()
	y.last = now
}
