//go:build linux

package reactor

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// listenSpec is one -l address with its port.
type listenSpec struct {
	ip   net.IP // nil: all interfaces
	port int
	// onDevice: ip belongs to one non-loopback device with RX queues, so
	// every SYN carries a real queue number (see reuseportSteering).
	onDevice bool
}

// parseListen turns -l (comma-separated hosts, each optionally host:port) and
// -p into listen specs.
func parseListen(listen string, port int) ([]listenSpec, error) {
	return parseListenWith(listen, port, net.LookupIP)
}

// parseListenWith is parseListen with the host name resolver as a parameter.
func parseListenWith(listen string, port int, lookup func(host string) ([]net.IP, error)) ([]listenSpec, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("port %d out of range", port)
	}
	if strings.TrimSpace(listen) == "" {
		return []listenSpec{{port: port}}, nil
	}
	var specs []listenSpec
	for _, h := range strings.Split(listen, ",") {
		h = strings.TrimSpace(h)
		p := port
		if host, ps, err := net.SplitHostPort(h); err == nil {
			n, err := strconv.Atoi(ps)
			if err != nil || n < 0 || n > 65535 {
				return nil, fmt.Errorf("listen address %q: bad port", h)
			}
			h, p = host, n
		}
		h = strings.Trim(h, "[]")
		ip := net.ParseIP(h)
		if ip == nil {
			if h == "" {
				return nil, fmt.Errorf("empty entry in listen list %q", listen)
			}
			ips, err := lookup(h)
			if err != nil {
				return nil, fmt.Errorf("listen address %q: %w", h, err)
			}
			if len(ips) == 0 {
				return nil, fmt.Errorf("listen address %q: no addresses", h)
			}
			ip = ips[0]
			for _, c := range ips {
				if c.To4() != nil {
					ip = c
					break
				}
			}
		}
		if ip.IsUnspecified() && ip.To4() != nil {
			ip = nil // 0.0.0.0 is the same as no address on a dual-stack socket
		}
		specs = append(specs, listenSpec{ip: ip, port: p})
	}
	return specs, nil
}

// listenGroup is n listening sockets in one SO_REUSEPORT group, listener i for
// reactor i, with the RX-queue steering program attached.
type listenGroup struct {
	fds  []int
	addr net.TCPAddr // the bound address
}

// openListenGroup binds n listeners to spec. With port 0 the first socket
// picks the port and the others join it.
func openListenGroup(spec listenSpec, n, backlog int) (*listenGroup, error) {
	if spec.port != 0 {
		if err := checkPortFree(spec.ip, spec.port); err != nil {
			return nil, err
		}
	}
	g := &listenGroup{}
	port := spec.port
	for i := 0; i < n; i++ {
		fd, addr, err := openListener(spec.ip, port, backlog)
		if err != nil {
			g.close()
			return nil, err
		}
		if i == 0 {
			g.addr = addr
			port = addr.Port
		}
		g.fds = append(g.fds, fd)
	}
	if err := attachReuseportSteering(g.fds[0], n, spec.onDevice); err != nil {
		// Still correct: the kernel hashes SYNs and the acceptors hand sockets over.
		slog.Warn("reactor: SYN steering by RX queue unavailable; connections will be handed over after accept", "err", err)
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

// openListener makes one non-blocking SO_REUSEPORT listening socket. A nil ip
// means all interfaces: a dual-stack IPv6 socket, or IPv4 without IPv6.
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
	where := net.JoinHostPort(ipString(ip), strconv.Itoa(port))
	var (
		fd  int
		err error
		sa  unix.Sockaddr
	)
	flags := unix.SOCK_STREAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	switch {
	case ip == nil:
		fd, err = unix.Socket(unix.AF_INET6, flags, 0)
		if err == nil {
			if err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0); err != nil {
				unix.Close(fd)
				return -1, where, fmt.Errorf("IPV6_V6ONLY: %w", err)
			}
			sa = &unix.SockaddrInet6{Port: port}
		} else {
			fd, err = unix.Socket(unix.AF_INET, flags, 0)
			sa = &unix.SockaddrInet4{Port: port}
		}
	case ip.To4() != nil:
		fd, err = unix.Socket(unix.AF_INET, flags, 0)
		s4 := &unix.SockaddrInet4{Port: port}
		copy(s4.Addr[:], ip.To4())
		sa = s4
	default:
		fd, err = unix.Socket(unix.AF_INET6, flags, 0)
		s6 := &unix.SockaddrInet6{Port: port}
		copy(s6.Addr[:], ip.To16())
		sa = s6
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

func ipString(ip net.IP) string {
	if ip == nil {
		return ""
	}
	return ip.String()
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

// tooManyConns is memcached's reply to a connection beyond -c.
var tooManyConns = []byte("ERROR Too many open connections\r\n")

// acceptBatch bounds the accepts done per listener event, so a SYN flood
// cannot starve the reactor's established connections.
const acceptBatch = 64

// accept drains up to acceptBatch connections from listener li, enforces -c,
// and keeps or hands over each connection according to its NAPI ID.
func (r *reactor) accept(li int) {
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
		r.eng.totalConns.Add(1)
		if !r.eng.admit() {
			r.eng.rejected.Add(1)
			_, _ = unix.Write(fd, tooManyConns)
			unix.Close(fd)
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
func (r *reactor) pauseAccept() {
	if r.acceptPausedUntil != (time.Time{}) {
		return
	}
	r.setListenEvents(0)
	r.acceptPausedUntil = time.Now().Add(acceptPause)
	r.eng.listenDisabled.Add(1)
}

// resumeAcceptDue re-arms the listeners once the pause is over and returns
// the epoll timeout (ms) the loop must not exceed meanwhile (-1: none).
func (r *reactor) resumeAcceptDue() int {
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

func (r *reactor) setListenEvents(events uint32) {
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
