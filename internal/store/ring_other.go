//go:build !linux

package store

// Without mmap support the rings stay on the Go heap.
func mapRing(n int, populate bool) ([]byte, error) { return make([]byte, n), nil }

func unmapRing([]byte) {}
