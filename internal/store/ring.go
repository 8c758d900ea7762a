package store

import "runtime"

// Ring memory. By default a ring is a Go []byte (the heap's zeroed pages,
// which the kernel backs lazily too). With Config.Mmap it is an anonymous
// mapping outside the Go heap (ring_linux.go), so that the garbage
// collector's heap goal stays independent of -m; the mappings are unmapped
// when a ring is replaced (SetMemoryLimit) and, for the last ones, once the
// Store is unreachable. Config.LargePages (-L) maps and prefaults the rings
// and advises huge pages, as memcached's -L preallocates its memory.

// newRing returns a zeroed ring of n bytes as the configuration asks.
func (s *Store) newRing(n int) ([]byte, error) {
	var b []byte
	if s.mapped() {
		var err error
		if b, err = mapRing(n, s.cfg.LargePages); err != nil {
			return nil, err
		}
	} else {
		b = make([]byte, n)
	}
	adviseHugePages(b)
	return b, nil
}

// mapped reports whether rings are mappings: asked for, implied by -L, or
// (for rings that replace the memory file's at run time) by -e. A memory
// file's rings are whole pages of its mapping, so unmapping one alone is
// exact too.
func (s *Store) mapped() bool { return s.cfg.Mmap || s.cfg.LargePages || s.cfg.MemoryFile != "" }

// freeRing gives a ring that is no longer used back, when it is a mapping.
func (s *Store) freeRing(b []byte) {
	if s.mapped() {
		unmapRing(b)
	}
}

// releaseRingsWhenUnreachable unmaps the rings once the Store is garbage:
// the shards slice does not point back at the Store, and no ring slice
// outlives the callback it was handed to.
func (s *Store) releaseRingsWhenUnreachable() {
	if !s.mapped() {
		return
	}
	runtime.AddCleanup(s, func(shards []shard) {
		for i := range shards {
			if shards[i].buf != nil {
				unmapRing(shards[i].buf)
				shards[i].buf = nil
			}
		}
	}, s.shards)
}
