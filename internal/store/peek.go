package store

// Peek reports whether key holds a live item and, if so, the slab class
// memcached would keep it in and its value length, without counting a get
// or touching the item: for log lines (memcached's watch logs every lookup
// its commands make, storage commands' included).
func (s *Store) Peek(key []byte) (found bool, class, valueLen int) {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	slot := sh.find(key, tag)
	if slot < 0 {
		return false, 0, 0
	}
	pos := sh.posOf(slot)
	r := sh.rec(pos)
	now := clampTime(s.Now())
	if r.expired(now) || sh.flushed(r, now) {
		return false, 0, 0
	}
	it := Item{s: s, sh: sh, pos: pos, now: now}
	return true, it.Class(), r.vlen()
}
