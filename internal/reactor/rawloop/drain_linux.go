//go:build linux

package rawloop

import (
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// BeginDrain stops accepting (IO.StopAccepting) and ends every connection
// as if its client had shut its side (drainConn).
func (l *Loop[E]) BeginDrain() {
	l.Draining = true
	l.io.StopAccepting()
	for _, c := range l.conns {
		if c != nil && c.FD >= 0 {
			l.drainConn(c)
		}
	}
	l.TakeHandoffs()
}

// drainConn ends c when the server stops (reactor.DrainTurn): a turn in
// RunYields while it has input or a reply to finish, Process closing it
// when nothing is left; else it closes once its replies are sent.
func (l *Loop[E]) drainConn(c *Conn[E]) {
	c.EOF = true
	if reactor.DrainTurn(len(c.In), c.Sess) {
		c.More = true
	} else {
		c.Closing, c.More = true, false
	}
	l.io.Rearm(c)
}

// Done reports whether a draining loop may end: no connection is left, or
// the shutdown's deadline passed (forced).
func (l *Loop[E]) Done(forced bool) bool {
	return l.Draining && (l.nconns == 0 || forced)
}

// sweepEvery is how often the idle sweep runs while -o idle_timeout is set.
const sweepEvery = time.Second

// SweepBound caps a wait (< 0: none) so the idle sweep runs on time.
func (l *Loop[E]) SweepBound(wait time.Duration) time.Duration {
	if l.group.IdleTimeout > 0 && (wait < 0 || wait > sweepEvery) {
		return sweepEvery
	}
	return wait
}

// SweepIdle closes clients that sent nothing for longer than -o
// idle_timeout, at most once a second, as memcached's connection-timeout
// thread does (the test is memcached's: seconds since the last request
// strictly greater than the timeout). A connection with replies still to
// send or requests queued is busy, not idle, and one partway through a
// value or streaming is not kicked (reactor.Kickable).
func (l *Loop[E]) SweepIdle() {
	idle := l.group.IdleTimeout
	if idle <= 0 || l.Now < l.nextSweep {
		return
	}
	l.nextSweep = l.Now + int64(sweepEvery/time.Second)
	secs := int64(max(idle/time.Second, 1))
	for _, c := range l.conns {
		if c == nil || c.FD < 0 || c.More || c.Closing || l.io.Unsent(c) > 0 || !reactor.Kickable(c.Sess) {
			continue
		}
		if l.Now-c.LastCmd.Load() > secs {
			l.group.Acct.IdleKick()
			reactor.NoteClose(c.Sess, reactor.CloseReasonIdle)
			l.CloseConn(c)
		}
	}
}
