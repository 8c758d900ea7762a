//go:build linux

package rawloop

import (
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// Accepted takes a connection the loop's listener li accepted: it enforces
// -c, then keeps the connection or hands it to the loop that serves its
// NAPI ID (reactor.Router; the -s listener's connections are dealt out in
// turn).
func (l *Loop[E]) Accepted(fd, li int, unixListener bool) {
	l.Stats.Accepted.Add(1)
	g := l.group
	if !g.Acct.Admit() {
		reactor.RejectFD(fd) // the message, then an orderly close
		return
	}
	// Replies are sent whole per turn; Nagle would only add latency.
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	id := reactor.IncomingNAPIID(fd)
	if t := g.Router.Route(l.ID, unixListener, id); t != l.ID {
		l.Stats.HandoffOut.Add(1)
		g.Loops[t].Mailbox.Post(reactor.Handoff{FD: fd, NAPIID: id, Listener: li})
		return
	}
	l.AddConn(fd, id, li)
}

// acceptPause is how long a loop stops accepting after an accept failed
// for lack of descriptors or memory (memcached's listen_disabled).
const acceptPause = 10 * time.Millisecond

// PauseAccept starts a pause of accepting unless one runs, and reports
// whether it started one (the engine then stops its listeners).
func (l *Loop[E]) PauseAccept() bool {
	if !l.acceptPausedUntil.IsZero() {
		return false
	}
	l.acceptPausedUntil = time.Now().Add(acceptPause)
	l.group.Acct.ListenDisabled()
	return true
}

// AcceptPauseLeft is how long the running pause still lasts; paused is
// false when none runs.
func (l *Loop[E]) AcceptPauseLeft() (left time.Duration, paused bool) {
	if l.acceptPausedUntil.IsZero() {
		return 0, false
	}
	return time.Until(l.acceptPausedUntil), true
}

// ResumeAccept ends a pause that is over and reports whether the engine
// should re-arm its listeners (not while draining).
func (l *Loop[E]) ResumeAccept() (rearm bool) {
	if left, paused := l.AcceptPauseLeft(); !paused || left > 0 {
		return false
	}
	l.acceptPausedUntil = time.Time{}
	l.group.Acct.ListenResumed()
	return !l.Draining
}
