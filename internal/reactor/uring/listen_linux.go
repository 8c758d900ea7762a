//go:build linux

package uring

import (
	"fmt"
	"net"

	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// listen opens, for every binding, one SO_REUSEPORT listener per reactor
// (each reactor runs a multishot accept on its own), under memcached's
// rules for the addresses of one -l entry (reactor.BindEach).
//
// Unlike the epoll engine no classic-BPF program steers SYNs by RX queue:
// the kernel hashes them over the group and the acceptor hands each
// connection to the reactor of its NAPI ID after accept.
func (e *engine) listen(binds []reactor.Binding) error {
	return reactor.BindEach(binds, func(b reactor.Binding) (int, error) {
		if b.Port != 0 {
			// Without this check our listeners would silently join the
			// SO_REUSEPORT group of another server on the same port.
			if err := reactor.CheckPortFree(b.IP, b.Port); err != nil {
				return 0, err
			}
		}
		port := b.Port
		group := len(e.bound)
		for i, r := range e.reactors {
			fd, addr, err := reactor.OpenListener(b.IP, port, e.cfg.Backlog, e.cfg.SocketMark)
			if err != nil && i == 0 {
				return 0, err
			}
			if err != nil {
				// Not one to skip: the group's first listener holds the port.
				return 0, fmt.Errorf("%v", err)
			}
			if i == 0 {
				e.bound = append(e.bound, &addr)
				e.Labels = append(e.Labels, reactor.AddrString(&addr))
				port = addr.Port
			}
			r.AddListener(fd, group)
		}
		return port, nil
	})
}

// listenUnix binds -s, memcached's AF_UNIX listener (then nothing else
// listens). AF_UNIX has no SO_REUSEPORT balancing, so reactor 0's multishot
// accept alone takes its connections and deals them out in turn
// (reactor.UnixSpreader says why); the other reactors hold the slot closed.
func (e *engine) listenUnix() error {
	path := e.cfg.UnixSocket
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("unix socket: %w", err)
	}
	fail := func(err error) error {
		unix.Close(fd)
		return err
	}
	// The file is made by the identity that is to own it (-u's user).
	err = reactor.AsUnixSocketOwner(e.cfg.UnixSocketOwner, func() error {
		if err := reactor.PrepareUnixSocket(path); err != nil {
			return err
		}
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
			return fmt.Errorf("bind %s: %w", path, err)
		}
		return reactor.SetUnixMask(path, e.cfg.UnixMask)
	})
	if err != nil {
		return fail(err)
	}
	if err := unix.Listen(fd, e.cfg.Backlog); err != nil {
		return fail(fmt.Errorf("listen %s: %w", path, err))
	}
	e.bound = append(e.bound, &net.UnixAddr{Name: path, Net: "unix"})
	e.Labels = append(e.Labels, reactor.UnixAddrString(path))
	for i, r := range e.reactors {
		if i == 0 {
			r.AddListener(fd, 0)
		} else {
			r.AddListener(-1, 0)
		}
	}
	return nil
}
