package store

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size transparent huge pages come in on x86-64 and arm64.
const hugePage = 2 << 20

// mapRing maps n bytes of anonymous private memory for a ring, outside the
// Go heap: the kernel backs it only as it is written, the garbage
// collector's goal does not grow with it, and munmap gives it back at once.
// Rings of a huge page or more start on a huge-page boundary, so that
// transparent huge pages can back all of them. With populate (-L) the pages
// are faulted in up front, as memcached's -L preallocates its memory.
func mapRing(n int, populate bool) ([]byte, error) {
	flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	if populate {
		flags |= unix.MAP_POPULATE
	}
	slack := 0
	if n >= hugePage {
		slack = hugePage
	}
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+slack), unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		return nil, fmt.Errorf("store: mmap of a %d-byte ring: %w", n, err)
	}
	if slack > 0 {
		head := int((hugePage - uintptr(p)%hugePage) % hugePage)
		if head > 0 {
			_ = unix.MunmapPtr(p, uintptr(head))
		}
		if tail := slack - head; tail > 0 {
			_ = unix.MunmapPtr(unsafe.Add(p, head+n), uintptr(tail))
		}
		p = unsafe.Add(p, head)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

func unmapRing(b []byte) {
	if len(b) > 0 {
		_ = unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(len(b)))
	}
}
