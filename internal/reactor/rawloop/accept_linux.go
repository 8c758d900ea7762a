//go:build linux

package rawloop

import (
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
