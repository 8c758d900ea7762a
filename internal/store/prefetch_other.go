//go:build !amd64

package store

import "unsafe"

// Without the assembly of prefetch_amd64.s, Prefetch does nothing: Go has
// no portable prefetch, and plain loads of slots without the shard lock
// would be data races.
const prefetchSupported = false

func prefetchProbes(p *indexProbe, n int, mem unsafe.Pointer, memLen uint64) {}
