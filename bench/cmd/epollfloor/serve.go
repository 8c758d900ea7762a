//go:build linux

package main

import (
	"errors"
	"unsafe"

	"github.com/gocached/gocached/bench/floor"
	"golang.org/x/sys/unix"
)

// conn is one client: its unparsed input.
type conn struct {
	floor.Requests
}

// serve runs the one loop: level-triggered epoll, a read per readable
// connection, its replies in one write.
func serve(lfd int) error {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(lfd)}); err != nil {
		return err
	}
	conns := map[int32]*conn{}
	events := make([]unix.EpollEvent, 64)
	buf := make([]byte, 16<<10)
	out := make([]byte, 0, 16<<10)
	for {
		n, err := unix.EpollWait(epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			if int(ev.Fd) == lfd {
				acceptAll(epfd, lfd, conns)
				continue
			}
			c := conns[ev.Fd]
			m, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(ev.Fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			if errno == unix.EAGAIN {
				continue
			}
			if errno != 0 || m == 0 {
				unix.Close(int(ev.Fd))
				delete(conns, ev.Fd)
				continue
			}
			out = c.Answer(buf[:m], out[:0])
			if len(out) > 0 {
				// Replies are small and the client reads them: a short
				// write would be the client's fault, and a floor does not
				// handle it.
				unix.RawSyscall(unix.SYS_WRITE, uintptr(ev.Fd), uintptr(unsafe.Pointer(&out[0])), uintptr(len(out)))
			}
		}
	}
}

func acceptAll(epfd, lfd int, conns map[int32]*conn) {
	for {
		fd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			return
		}
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd)}) != nil {
			unix.Close(fd)
			continue
		}
		conns[int32(fd)] = &conn{}
	}
}
