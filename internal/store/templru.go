package store

// memcached's TEMP LRU (-o temporary_ttl=N, or `lru temp_ttl N` at run
// time): an item stored with at most N seconds to live is never evicted to
// make room; it goes only when it expires, is replaced or deleted. Such
// items are short-lived by nature, so evicting them gains little memory for
// long and loses data a client expects to find for those few seconds.
//
// Here a temporary record carries recTemp, decided when it is linked, and
// sits in its class's TEMP queue, which allocations never evict from: a
// class holding nothing but temporary items fails a store with
// OutOfMemory, as memcached's does when only its TEMP LRU holds items.

// defaultTemporaryTTL is memcached's temporary_ttl when none is given (it
// is reported, but unused until the TEMP LRU is turned on).
const defaultTemporaryTTL = 61

// tempSetting packs the TEMP LRU setting into one word for storeHooks.temp:
// ttl when on, -(ttl+1) when off, so the ttl survives being turned off (as
// `stats settings` shows it).
func tempSetting(ttl int64, on bool) int64 {
	if on {
		return ttl
	}
	return -ttl - 1
}

// SetTemporaryTTL turns memcached's TEMP LRU on for items stored with at
// most ttl seconds to live, or off when ttl is negative (keeping the last
// ttl for TemporaryTTL, as memcached's `lru temp_ttl -1` does). It applies
// to items stored from then on.
func (s *Store) SetTemporaryTTL(ttl int64) {
	if ttl < 0 {
		old, _ := s.TemporaryTTL()
		s.hooks.temp.Store(tempSetting(old, false))
		return
	}
	s.hooks.temp.Store(tempSetting(ttl, true))
}

// TemporaryTTL reports the TEMP LRU's ttl and whether it is on.
func (s *Store) TemporaryTTL() (ttl int64, on bool) {
	v := s.hooks.temp.Load()
	if v >= 0 {
		return v, true
	}
	return -v - 1, false
}

// temporary reports whether r, just written, belongs in the TEMP LRU:
// memcached's test, its exptime at most temporary_ttl seconds after the
// time it was stored. Items that never expire are never temporary.
func (sh *shard) temporary(r rec) bool {
	ttl := sh.hooks.temp.Load()
	if ttl < 0 {
		return false
	}
	e := r.exptime()
	return e != 0 && int64(e)-int64(r.stored()) <= ttl
}

// countHit counts a get hit on r in its class and by the queue r is in
// (memcached's hits_to_hot, ...; the queue byte changes only with r's
// shard locked, as here).
func (sh *shard) countHit(r rec) {
	c := &sh.cls[r.class()]
	c.getHits++
	switch r.queue() {
	case queueHot:
		c.hitsHot++
	case queueWarm:
		c.hitsWarm++
	case queueCold:
		c.hitsCold++
	case queueTemp:
		c.hitsTemp++
	}
}
