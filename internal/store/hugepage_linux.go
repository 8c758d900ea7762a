package store

import "golang.org/x/sys/unix"

// adviseHugePages asks the kernel to back the arena (or an index) with transparent
// huge pages where it is configured for madvise: random access over hundreds
// of megabytes misses the TLB far less often with 2 MiB pages. The advice is
// best effort; failure only costs speed.
func adviseHugePages(b []byte) {
	const huge = 2 << 20
	if len(b) < huge {
		return
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
