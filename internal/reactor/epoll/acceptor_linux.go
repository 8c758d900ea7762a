//go:build linux

package epoll

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
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
func openListenGroup(b reactor.Binding, n, backlog int, onDevice bool) (*listenGroup, error) {
	if b.Port != 0 {
		if err := checkPortFree(b.IP, b.Port); err != nil {
			return nil, err
		}
	}
	g := &listenGroup{}
	port := b.Port
	for i := 0; i < n; i++ {
		fd, addr, err := openListener(b.IP, port, backlog)
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
		unix.Close(fd)
	}
	g.fds = nil
}

// checkPortFree fails when something already listens on ip:port. Without
// this check our SO_REUSEPORT listeners would silently join the group of
// another server of the same user (a second gocached on the same port) and
// share its connections; memcached would have refused to start.
func checkPortFree(ip net.IP, port int) error {
	fd, _, err := openSocket(ip, port, false)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// openListener makes one non-blocking SO_REUSEPORT listening socket.
func openListener(ip net.IP, port, backlog int) (int, net.TCPAddr, error) {
	fd, where, err := openSocket(ip, port, true)
	if err != nil {
		return -1, net.TCPAddr{}, err
	}
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		return -1, net.TCPAddr{}, fmt.Errorf("listen %s: %w", where, err)
	}
	bound, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, net.TCPAddr{}, fmt.Errorf("getsockname %s: %w", where, err)
	}
	return fd, sockaddrTCP(bound), nil
}

// openSocket makes a non-blocking TCP socket bound to ip:port, in the
// SO_REUSEPORT group there when reusePort is set. It returns the address in
// words for errors.
func openSocket(ip net.IP, port int, reusePort bool) (int, string, error) {
	where := net.JoinHostPort(ip.String(), strconv.Itoa(port))
	var (
		fd  int
		err error
		sa  unix.Sockaddr
	)
	flags := unix.SOCK_STREAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	if v4 := ip.To4(); v4 != nil {
		fd, err = unix.Socket(unix.AF_INET, flags, 0)
		s4 := &unix.SockaddrInet4{Port: port}
		copy(s4.Addr[:], v4)
		sa = s4
	} else {
		fd, err = unix.Socket(unix.AF_INET6, flags, 0)
		s6 := &unix.SockaddrInet6{Port: port}
		copy(s6.Addr[:], ip.To16())
		sa = s6
		// IPv6 sockets never take IPv4 (memcached's IPV6_V6ONLY): the
		// wildcard's IPv4 half has a socket of its own.
		if err == nil {
			if err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
				unix.Close(fd)
				return -1, where, fmt.Errorf("IPV6_V6ONLY: %w", err)
			}
		}
	}
	if err != nil {
		return -1, where, fmt.Errorf("socket for %s: %w", where, err)
	}
	fail := func(what string, err error) (int, string, error) {
		unix.Close(fd)
		return -1, where, fmt.Errorf("%s %s: %w", what, where, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("SO_REUSEADDR", err)
	}
	if reusePort {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return fail("SO_REUSEPORT", err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	return fd, where, nil
}

// sockaddrTCP converts a socket address to a *net.TCPAddr value.
func sockaddrTCP(sa unix.Sockaddr) net.TCPAddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.TCPAddr{IP: net.IP(append([]byte(nil), a.Addr[:]...)), Port: a.Port}
	case *unix.SockaddrInet6:
		ip := net.IP(append([]byte(nil), a.Addr[:]...))
		if ip.To4() != nil && !ip.IsUnspecified() {
			ip = ip.To4()
		}
		return net.TCPAddr{IP: ip, Port: a.Port}
	}
	return net.TCPAddr{}
}

// acceptBatch bounds the accepts done per listener event, so a SYN flood
// cannot starve the reactor's established connections.
const acceptBatch = 64

// accept drains up to acceptBatch connections from listener li, enforces -c,
// and keeps or hands over each connection according to its NAPI ID.
func (r *loop) accept(li int) {
	lfd := r.listeners[li]
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
				r.eng.logAcceptError(err)
				r.pauseAccept()
			}
			return
		}
		r.stats.accepted.Add(1)
		if !r.eng.acct.Admit() {
			reactor.RejectFD(fd)
			continue
		}
		// Replies are written whole per batch; Nagle would only add latency.
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		id := incomingNAPIID(fd)
		if t := r.eng.router.route(r.id, id); t != r.id {
			r.stats.handoffOut.Add(1)
			r.eng.reactors[t].mailbox.post(handoff{fd: fd, napiID: id, listener: li})
			continue
		}
		r.addConn(fd, id, li)
	}
}

// acceptPause is how long a reactor stops accepting after accept failed for
// lack of descriptors or memory (memcached's listen_disabled).
const acceptPause = 10 * time.Millisecond

// pauseAccept takes r's listeners out of its epoll set for acceptPause.
func (r *loop) pauseAccept() {
	if r.acceptPausedUntil != (time.Time{}) {
		return
	}
	r.setListenEvents(0)
	r.acceptPausedUntil = time.Now().Add(acceptPause)
	r.eng.acct.ListenDisabled()
}

// resumeAcceptDue re-arms the listeners once the pause is over and returns
// the epoll timeout (ms) the loop must not exceed meanwhile (-1: none).
func (r *loop) resumeAcceptDue() int {
	if r.acceptPausedUntil == (time.Time{}) {
		return -1
	}
	left := time.Until(r.acceptPausedUntil)
	if left > 0 {
		return int((left + time.Millisecond - 1) / time.Millisecond)
	}
	r.acceptPausedUntil = time.Time{}
	if !r.draining {
		r.setListenEvents(unix.EPOLLIN)
	}
	return -1
}

func (r *loop) setListenEvents(events uint32) {
	for li, fd := range r.listeners {
		if fd < 0 {
			continue
		}
		ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(tagListener0 - li)}
		if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_MOD, fd, &ev); err != nil {
			r.eng.logAcceptError(fmt.Errorf("epoll_ctl listener: %w", err))
		}
	}
}
