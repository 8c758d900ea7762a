//go:build linux

package reactor

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Listening sockets for the engines that manage raw descriptors (epoll,
// uring): one way to bind, one way to name an address.

// CheckPortFree fails when something already listens on ip:port. Without
// this check our SO_REUSEPORT listeners would silently join the group of
// another server of the same user (a second gocached on the same port) and
// share its connections; memcached would have refused to start.
func CheckPortFree(ip net.IP, port int) error {
	fd, _, err := OpenSocket(ip, port, false)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// OpenListener makes one non-blocking SO_REUSEPORT listening socket,
// marked with mark (-o sock_cookie_id) unless it is 0.
func OpenListener(ip net.IP, port, backlog int, mark uint32) (int, net.TCPAddr, error) {
	fd, where, err := OpenSocket(ip, port, true)
	if err != nil {
		return -1, net.TCPAddr{}, err
	}
	MarkSocket(fd, mark)
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		return -1, net.TCPAddr{}, fmt.Errorf("listen %s: %w", where, err)
	}
	bound, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, net.TCPAddr{}, fmt.Errorf("getsockname %s: %w", where, err)
	}
	return fd, SockaddrTCP(bound), nil
}

// OpenSocket makes a non-blocking TCP socket bound to ip:port, in the
// SO_REUSEPORT group there when reusePort is set. It returns the address in
// words for errors.
func OpenSocket(ip net.IP, port int, reusePort bool) (int, string, error) {
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

// SockaddrTCP converts a socket address to a *net.TCPAddr value.
func SockaddrTCP(sa unix.Sockaddr) net.TCPAddr {
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

// SockaddrString formats a socket address for `stats conns`.
func SockaddrString(sa unix.Sockaddr) string {
	if u, ok := sa.(*unix.SockaddrUnix); ok {
		return UnixAddrString(u.Name)
	}
	a := SockaddrTCP(sa)
	return AddrString(&a)
}

// PeerOf names a connected socket's transport and peer as memcached's
// connection events do: "tcp" and the client's address, or "local" with no
// address for a unix socket.
func PeerOf(fd int) (transport string, peer netip.AddrPort) {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return "tcp", netip.AddrPort{}
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return "tcp", netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return "tcp", netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	default:
		return "local", netip.AddrPort{}
	}
}

// MarkSocket sets memcached's -o sock_cookie_id on a listening socket:
// SO_MARK, which the connections it accepts inherit, for firewall and
// routing rules. As in memcached a failure (it needs CAP_NET_ADMIN) is
// reported and the socket used unmarked; 0 leaves it alone.
func MarkSocket(fd int, mark uint32) {
	if mark == 0 {
		return
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_MARK, int(mark)); err != nil {
		slog.Warn("setsockopt SO_MARK for -o sock_cookie_id failed; socket left unmarked", "fd", fd, "err", err)
	}
}

// MarkControl is MarkSocket for the net package's ListenConfig.Control.
func MarkControl(mark uint32) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { MarkSocket(int(fd), mark) })
	}
}
