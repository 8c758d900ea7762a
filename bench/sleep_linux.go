package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// preparePacerThread lowers the calling (locked) thread's timer slack from
// the default 50µs, so nanosleep wakes the pacer when asked.
func preparePacerThread() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0) }

// sleepPrecise sleeps for d. Go's timers wake up to a millisecond late on an
// idle runtime, which would show up as client-side latency in an open loop,
// so the last stretch is a nanosleep on the pacer's own thread.
func sleepPrecise(d time.Duration) {
	if d > 2*time.Millisecond {
		time.Sleep(d - time.Millisecond)
		return // the caller loops and sleeps the rest precisely
	}
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
