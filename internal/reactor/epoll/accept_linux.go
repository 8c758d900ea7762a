//go:build linux

package epoll

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// listenGroup is n listening sockets in one SO_REUSEPORT group, listener i for
// reactor i, with the RX-queue steering program attached.
type listenGroup struct {
	fds   []int
	addr  net.TCPAddr // the bound address (TCP groups)
	unix  string      // the socket path (the -s group), "" for TCP
	label string      // the address in `stats conns`: "tcp:...", "unix:..."
}

// netAddr is the group's address as a net.Addr.
func (g *listenGroup) netAddr() net.Addr {
	if g.unix != "" {
		return &net.UnixAddr{Name: g.unix, Net: "unix"}
	}
	a := g.addr
	return &a
}

// openListenGroup binds n listeners to b. With port 0 the first socket picks
// the port and the others join it. onDevice says b's address belongs to one
// non-loopback device with RX queues, so every SYN carries a real queue
// number (see reuseportSteering).
func openListenGroup(b reactor.Binding, n, backlog int, mark uint32, onDevice bool) (*listenGroup, error) {
	if b.Port != 0 {
		if err := reactor.CheckPortFree(b.IP, b.Port); err != nil {
			return nil, err
		}
	}
	g := &listenGroup{}
	port := b.Port
	for i := 0; i < n; i++ {
		fd, addr, err := reactor.OpenListener(b.IP, port, backlog, mark)
		if err != nil {
			g.close()
			return nil, err
		}
		if i == 0 {
			g.addr = addr
			g.label = reactor.AddrString(&g.addr)
			port = addr.Port
		}
		g.fds = append(g.fds, fd)
	}
	if err := attachReuseportSteering(g.fds[0], n, onDevice); err != nil {
		// Still correct: the kernel hashes SYNs and the acceptors hand sockets over.
		slog.Warn("epoll: SYN steering by RX queue unavailable; connections will be handed over after accept", "err", err)
	}
	return g, nil
}

func (g *listenGroup) close() {
	for _, fd := range g.fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	g.fds = nil
}

// acceptBatch bounds the accepts done per listener event, so a SYN flood
// cannot starve the reactor's established connections.
const acceptBatch = 64

// accept drains up to acceptBatch connections from listener li and hands
// each to the core's accept-and-route tail (rawloop.Loop.Accepted).
func (r *loop) accept(li int) {
	lfd := r.Listeners()[li].FD
	for range acceptBatch {
		fd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			switch {
			case errors.Is(err, unix.EINTR), errors.Is(err, unix.ECONNABORTED):
				continue
			case errors.Is(err, unix.EAGAIN):
			default:
				// EMFILE, ENFILE, ENOBUFS...: the pending connection stays
				// queued and the level-triggered listener would report it
				// again at once, spinning the reactor; pause instead.
				r.eng.LogAcceptError(err)
				r.pauseAccept()
			}
			return
		}
		// The -s listener's connections are dealt out in turn, TCP's
		// follow their NAPI (reactor.Router).
		r.Accepted(fd, li, r.eng.groups[r.Listeners()[li].Group].unix != "")
	}
}

// pauseAccept takes r's listeners out of its epoll set for a while
// (rawloop.Loop.PauseAccept): the pending connection stays queued.
func (r *loop) pauseAccept() {
	if r.PauseAccept() {
		r.setListenEvents(0)
	}
}

// resumeAcceptDue re-arms the listeners once the pause is over and returns
// the epoll timeout (ms) the loop must not exceed meanwhile (-1: none).
func (r *loop) resumeAcceptDue() int {
	if r.ResumeAccept() {
		r.setListenEvents(unix.EPOLLIN)
	}
	if left, paused := r.AcceptPauseLeft(); paused {
		return int((max(left, 0) + time.Millisecond - 1) / time.Millisecond)
	}
	return -1
}

func (r *loop) setListenEvents(events uint32) {
	for li, ln := range r.Listeners() {
		fd := ln.FD
		if fd < 0 {
			continue
		}
		ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(tagListener0 - li)}
		if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_MOD, fd, &ev); err != nil {
			r.eng.LogAcceptError(fmt.Errorf("epoll_ctl listener: %w", err))
		}
	}
}
