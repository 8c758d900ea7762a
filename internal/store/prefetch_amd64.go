package store

import "unsafe"

const prefetchSupported = true

// prefetchLine asks for the cache line holding p (PREFETCHT0).
//
//go:noescape
func prefetchLine(p unsafe.Pointer)

// prefetchRecord reads the index entry at slot, or at next when slot holds
// another tag, and if one holds tag and its offset lies within the arena
// (mem, memLen bytes) asks for the lines at that offset and keyEnd bytes
// after it, and returns the offset; else it returns noRecord.
//
//go:noescape
func prefetchRecord(slot, next *uint64, tag uint32, mem unsafe.Pointer, memLen, keyEnd uint64) uint64
