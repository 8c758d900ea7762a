package store

import "sync/atomic"

// EvictedItem describes an item the store is evicting, for memcached's
// `watch evictions` lines. Key is valid only during the hook.
type EvictedItem struct {
	Key        []byte
	Fetched    bool
	Exptime    int64 // absolute unix seconds, 0 = never
	LastAccess int64 // unix seconds
	ValueLen   int
	Flags      uint32
}

// storeHooks is shared by the Store and its shards; it is a separate object
// so that the shards never point into the Store (releaseArenaWhenUnreachable).
type storeHooks struct {
	evict atomic.Pointer[func(EvictedItem)]
	temp  atomic.Int64 // the TEMP LRU setting, packed by tempSetting (templru.go)
	lru   atomic.Pointer[lruTuning]
}

// SetEvictionHook installs fn, called for every item evicted to make room
// (not for expired, flushed or deleted ones), with the item's shard locked:
// fn must be quick and must not call the store. nil removes it.
func (s *Store) SetEvictionHook(fn func(EvictedItem)) {
	if fn == nil {
		s.hooks.evict.Store(nil)
		return
	}
	s.hooks.evict.Store(&fn)
}

// noteEviction calls the eviction hook, if any, for the record r.
func (sh *shard) noteEviction(r rec) {
	if sh.hooks == nil {
		return
	}
	if fn := sh.hooks.evict.Load(); fn != nil {
		(*fn)(EvictedItem{
			Key:        r.key(),
			Fetched:    r.bits()&recFetched != 0,
			Exptime:    int64(r.exptime()),
			LastAccess: int64(r.accessed()),
			ValueLen:   r.vlen(),
			Flags:      r.flags(),
		})
	}
}
