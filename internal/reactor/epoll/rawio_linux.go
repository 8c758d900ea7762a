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

// writevNonblock writes p and then ext (either may be empty) with one
// system call: a reply's bytes and a value sent from the store's memory.
func writevNonblock(fd int, p, ext []byte) (int, error) {
	if len(ext) == 0 {
		return writeNonblock(fd, p)
	}
	if len(p) == 0 {
		return writeNonblock(fd, ext)
	}
	iov := [2]unix.Iovec{{Base: &p[0]}, {Base: &ext[0]}}
	iov[0].SetLen(len(p))
	iov[1].SetLen(len(ext))
	n, _, errno := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), 2)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
