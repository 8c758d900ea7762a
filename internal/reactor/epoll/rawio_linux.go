//go:build linux

package epoll

import (
	"unsafe"

	"github.com/gocached/gocached/internal/reactor/rawloop"

	"golang.org/x/sys/unix"
)

// The reactor's sockets are non-blocking, so read and write return without
// sleeping. Issuing them as raw system calls skips the runtime's
// entersyscall/exitsyscall bookkeeping, which exists to hand the P to another
// thread while a call blocks and is pure overhead here: the reactor keeps
// its thread locked and has a P of its own. Blocking calls (epoll_wait) must
// keep going through unix.Syscall so the runtime can stop the world.

func readNonblock(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func writeNonblock(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// writevNonblock writes parts, in order, with one system call: a reply's
// bytes and the values sent from the store's memory in their places
// (rawloop.Conn.Pieces), at most rawloop.MaxPieces of them.
func writevNonblock(fd int, parts [][]byte) (int, error) {
	if len(parts) == 1 {
		return writeNonblock(fd, parts[0])
	}
	var iov [rawloop.MaxPieces]unix.Iovec
	n := 0
	for _, b := range parts[:min(len(parts), rawloop.MaxPieces)] {
		if len(b) > 0 {
			iov[n] = unix.Iovec{Base: &b[0]}
			iov[n].SetLen(len(b))
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	w, _, errno := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(n))
	if errno != 0 {
		return 0, errno
	}
	return int(w), nil
}
