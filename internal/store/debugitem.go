package store

import (
	"sync"
	"sync/atomic"
)

// memcached-debug's `debugitem` hooks, which tests use to hold the page
// mover up: `lock` holds a key's item lock until `unlock`, and `ref` takes
// a reference to an item that only `unref` drops.
//
// A held lock here is a mark, not a held shard mutex: the connection that
// took it, and every other one on the same reactor thread, must go on
// being served, so nothing may block on it. The page mover, which in
// memcached only tries an item's lock, treats an item whose key is marked
// as it treats one whose shard is busy (MOVE_LOCKED). A reference is a
// ValueRef pin (cursor.go).

// debugLocks is the set of keys held by `debugitem lock`.
type debugLocks struct {
	n    atomic.Int32 // held marks; the mover looks at keys only when nonzero
	mu   sync.Mutex
	keys map[string]int
}

// DebugLock marks key locked for the page mover until DebugUnlock.
// Marks nest.
func (s *Store) DebugLock(key []byte) {
	d := &s.debugLocks
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.keys == nil {
		d.keys = make(map[string]int)
	}
	d.keys[string(key)]++
	d.n.Add(1)
}

// DebugUnlock ends one DebugLock on key; a key not locked is ignored.
func (s *Store) DebugUnlock(key []byte) {
	d := &s.debugLocks
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.keys[string(key)]
	if !ok {
		return
	}
	if c > 1 {
		d.keys[string(key)] = c - 1
	} else {
		delete(d.keys, string(key))
	}
	d.n.Add(-1)
}

// debugLocked reports whether key is marked by DebugLock.
func (s *Store) debugLocked(key []byte) bool {
	d := &s.debugLocks
	if d.n.Load() == 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.keys[string(key)]
	return ok
}

// DebugRef pins key's item, as memcached-debug's `debugitem ref` takes a
// reference with item_get (no bump, no get counted; an expired or flushed
// item found on the way is unlinked as any lookup does). It reports false
// when the key is absent. The ref must be released with ReleaseRef.
func (s *Store) DebugRef(key []byte) (ValueRef, bool) {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	slot := sh.lookup(key, tag, clampTime(s.Now()))
	if slot < 0 {
		return ValueRef{}, false
	}
	pos := sh.posOf(slot)
	return sh.refOf(pos, sh.rec(pos)), true
}
