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

// writevNonblock writes p, then ext and tail (any may be empty) with one
// system call: a reply's bytes, a value sent from the store's memory, and
// the bytes after the value.
func writevNonblock(fd int, p, ext, tail []byte) (int, error) {
	if len(ext)+len(tail) == 0 {
		return writeNonblock(fd, p)
	}
	var iov [3]unix.Iovec
	n := 0
	for _, b := range [3][]byte{p, ext, tail} {
		if len(b) > 0 {
			iov[n] = unix.Iovec{Base: &b[0]}
			iov[n].SetLen(len(b))
			n++
		}
	}
	w, _, errno := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(n))
	if errno != 0 {
		return 0, errno
	}
	return int(w), nil
}
