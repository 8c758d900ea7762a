package server

import (
	"context"
	"time"
)

// A stop answers what its clients already asked for, and so waits for
// replies to go out; a client that reads nothing would hold the stop for
// all of shutdownGrace. memcached has no such wait: it exits at its clock's
// next tick, within a second of the signal, whatever is still unsent. So
// the wait ends as soon as no reply byte has been handed to the kernel for
// stopStillFor: a client that keeps reading gets what it asked for, and one
// that does not is cut a second later, before an init script's SIGKILL
// (Debian's sends it after 5 s) would cost the NAPI knobs' restore and
// the -e save, and without holding up a systemd restart, which waits for
// the exit. The count moves only when a write completes: a full socket
// buffer takes bytes back in steps of about a third of it (up to some
// 1.4 MB), so a client reading slower than about 1 MB/s may be cut too;
// memcached cuts every client within the second.
const (
	stopStillFor   = time.Second
	stopCheckEvery = 100 * time.Millisecond
)

// cutWhenStill calls cut once written (the bytes the engine has sent so
// far) stops growing for still, checking every period, unless ctx ends
// first. It reports whether it cut.
func cutWhenStill(ctx context.Context, written func() uint64, still, period time.Duration, cut func()) bool {
	t := time.NewTicker(period)
	defer t.Stop()
	last, since := written(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return false
		case now := <-t.C:
			if w := written(); w != last {
				last, since = w, now
			} else if now.Sub(since) >= still {
				cut()
				return true
			}
		}
	}
}
