//go:build !amd64

package store

import "unsafe"

// Without the assembly of prefetch_amd64.s, Prefetch does nothing: Go has
// no portable prefetch, and plain loads of slots without the shard lock
// would be data races.
const prefetchSupported = false

func prefetchLine(unsafe.Pointer) {}

func prefetchRecord(slot, next *uint64, tag uint32, mem unsafe.Pointer, memLen, keyEnd uint64) uint64 {
	return noRecord
}
