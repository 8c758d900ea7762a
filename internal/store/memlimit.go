package store

import "errors"

// Run-time changes of the memory limit (memcached's `cache_memlimit`).
//
// The limit is how many pages the classes may take from the arena, so a
// new one applies to the next page a class asks for: raising it lets the
// classes grow again, lowering it stops their growth, and pages in use
// beyond it stay with their classes, as in memcached (whose page mover,
// with slab_reassign, may later take them back). The arena reserves
// address space for four times the start's limit (at least 64 GiB); a
// larger limit is cut to it. With LargePages (-L) the limit is fixed, as
// memcached's preallocated memory is.

// ErrMemoryLimit is returned by SetMemoryLimit for a limit the store cannot
// take.
var ErrMemoryLimit = errors.New("store: memory limit out of bounds")

// MemoryLimit reports the current memory limit in bytes.
func (s *Store) MemoryLimit() int64 { return s.memLimit.Load() }

// SetMemoryLimit makes limit the pages' new limit.
func (s *Store) SetMemoryLimit(limit int64) error {
	s.resizeMu.Lock()
	defer s.resizeMu.Unlock()
	items := limit - max(s.cfg.Premalloced, 0)
	if items < pageSize || s.cfg.LargePages {
		return ErrMemoryLimit
	}
	s.slabs.arena.setLimit(items)
	if s.flash != nil {
		s.setReserve(s.flash.knobs.load().minClass) // 1 % of the new limit
	}
	s.memLimit.Store(limit)
	return nil
}
