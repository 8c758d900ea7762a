//go:build linux

package epoll

import (
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// sweepIdle closes clients that sent nothing for longer than -o
// idle_timeout, at most once a second, as memcached's connection-timeout
// thread does (the test is memcached's: seconds since the last request
// strictly greater than the timeout). A connection with replies still to
// send or requests queued is busy, not idle, and one partway through a
// value or streaming is not kicked (reactor.Kickable).
func (r *loop) sweepIdle() {
	idle := r.eng.cfg.IdleTimeout
	if idle <= 0 || r.now < r.nextSweep {
		return
	}
	r.nextSweep = r.now + 1
	secs := int64(max(idle/time.Second, 1))
	for _, c := range r.conns {
		if c == nil || c.fd < 0 || c.more || c.closing || len(c.out) > c.woff || !reactor.Kickable(c.sess) {
			continue
		}
		if r.now-c.lastCmd.Load() > secs {
			r.eng.acct.IdleKick()
			reactor.NoteClose(c.sess, reactor.CloseReasonIdle)
			r.closeConn(c)
		}
	}
}

// idleWaitBound caps the epoll_wait timeout (ms) so the sweep runs on time.
func (r *loop) idleWaitBound(timeout int) int {
	if r.eng.cfg.IdleTimeout > 0 && (timeout < 0 || timeout > 1000) {
		return 1000
	}
	return timeout
}
