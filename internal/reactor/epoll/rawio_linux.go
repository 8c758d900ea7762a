//go:build linux

package epoll

import (
	"unsafe"

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

// writevNonblock writes iov's pieces, in order, with one system call: a
// reply's bytes and the values sent from the store's memory in their
// places (rawloop.Conn.Iovecs).
func writevNonblock(fd int, iov []unix.Iovec) (int, error) {
	if len(iov) == 0 {
		return 0, nil
	}
	w, _, errno := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if errno != 0 {
		return 0, errno
	}
	return int(w), nil
}
