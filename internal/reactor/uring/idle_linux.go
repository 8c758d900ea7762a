//go:build linux

package uring

import (
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// sweepIdle closes clients that sent nothing for longer than -o
// idle_timeout, at most once a second, with memcached's test (seconds since
// the last request strictly greater than the timeout). A connection with
// replies still to send or requests queued is busy, not idle, and one
// partway through a value or streaming is not kicked (reactor.Kickable).
func (r *loop) sweepIdle() {
	idle := r.eng.cfg.IdleTimeout
	if idle <= 0 || r.now < r.nextSweep {
		return
	}
	r.nextSweep = r.now + 1
	secs := int64(max(idle/time.Second, 1))
	for _, c := range r.conns {
		if c == nil || c.fd < 0 || c.more || c.closing || c.pending() > 0 || !reactor.Kickable(c.sess) {
			continue
		}
		if r.now-c.lastCmd.Load() > secs {
			r.eng.acct.IdleKick()
			reactor.NoteClose(c.sess, reactor.CloseReasonIdle)
			r.closeConn(c)
		}
	}
}

// idleWaitBound caps the wait (ns, < 0: none) so the sweep runs on time.
func (r *loop) idleWaitBound(t int64) int64 {
	if r.eng.cfg.IdleTimeout > 0 && (t < 0 || t > int64(time.Second)) {
		return int64(time.Second)
	}
	return t
}
