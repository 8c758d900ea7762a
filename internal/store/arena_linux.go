package store

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size transparent huge pages come in on x86-64 and arm64.
const hugePage = 2 << 20

// mapArena reserves size bytes of anonymous private memory outside the Go
// heap, starting on a huge-page boundary so that transparent huge pages can
// back it: the garbage collector's goal does not grow with -m, the kernel
// backs only pages written, and MAP_NORESERVE keeps the reservation beyond
// -m from counting against overcommit. With populate (-L) the first
// populate bytes are faulted in at once, as memcached's -L preallocates.
func mapArena(size, populate int, prefault bool) ([]byte, error) {
	flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_NORESERVE
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size+hugePage), unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		return nil, fmt.Errorf("store: mmap of a %d-byte item arena: %w", size, err)
	}
	head := int((hugePage - uintptr(p)%hugePage) % hugePage)
	if head > 0 {
		_ = unix.MunmapPtr(p, uintptr(head))
	}
	if tail := hugePage - head; tail > 0 {
		_ = unix.MunmapPtr(unsafe.Add(p, head+size), uintptr(tail))
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, head)), size)
	adviseHugePages(b)
	if prefault {
		populateBytes(b[:min(populate, size)])
	}
	return b, nil
}

// populateBytes faults b in: MADV_POPULATE_WRITE where the kernel has it
// (5.14), else a write to every page.
func populateBytes(b []byte) {
	if len(b) == 0 || unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil {
		return
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
}

func unmapArena(b []byte) {
	if len(b) > 0 {
		_ = unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(len(b)))
	}
}

// dropPage gives a page's memory back to the kernel; it reads as zeros
// when next touched.
func dropPage(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
