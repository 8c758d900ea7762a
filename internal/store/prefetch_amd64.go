package store

import "unsafe"

const prefetchSupported = true

// prefetchProbes is Store.prefetchProbes over n probes from p, for an arena
// of memLen bytes at mem (prefetch_amd64.s).
//
//go:noescape
func prefetchProbes(p *indexProbe, n int, mem unsafe.Pointer, memLen uint64)
