//go:build !linux

package store

// Without mmap support the arena stays on the Go heap.
func mapArena(size, populate int, prefault bool) ([]byte, error) { return make([]byte, size), nil }

func unmapArena([]byte) {}

func dropPage(b []byte) { clear(b) }
