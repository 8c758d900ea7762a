package store

// Presence is what a lookup of a key finds, in the words memcached's
// item_get log line uses for it (its was_found).
type Presence uint8

const (
	Absent  Presence = iota // no item under the key: "not_found"
	Present                 // a live item: "found"
	Flushed                 // an item a flush_all has invalidated: "flushed"
	Expired                 // an item past its exptime: "expired"
)

var presenceNames = [...]string{Absent: "not_found", Present: "found", Flushed: "flushed", Expired: "expired"}

// String is memcached's name for p in its item_get log line.
func (p Presence) String() string { return presenceNames[p] }

// Peeked is what Peek saw under a key.
type Peeked struct {
	Presence Presence
	// Class (memcached's slab class), ValueLen and TTL describe a Present
	// item; TTL is LogTTL's of its expiry.
	Class, ValueLen int
	TTL             uint32
}

// Peek reports what a lookup of key would find and, for a live item, the
// slab class memcached would keep it in, its value length and TTL, without
// counting a get, unlinking a dead item or touching the item: for log
// lines (memcached's watch logs every lookup its commands make, storage
// commands' included, and each store as the item then is). A flushed item
// is reported as Flushed even when it has expired too, as memcached tests
// the flush first.
func (s *Store) Peek(key []byte) Peeked {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	slot := sh.find(key, tag)
	if slot < 0 {
		return Peeked{}
	}
	pos := sh.posOf(slot)
	r := sh.rec(pos)
	now := clampTime(s.Now())
	switch {
	case sh.flushed(r, now):
		return Peeked{Presence: Flushed}
	case r.expired(now):
		return Peeked{Presence: Expired}
	}
	it := Item{s: s, sh: sh, pos: pos, now: now}
	return Peeked{Presence: Present, Class: it.Class(), ValueLen: r.vlen(), TTL: logTTL(r.exptime(), int64(now))}
}

// LogTTL is the "ttl" memcached's item_store log line shows for a client
// exptime given now: 0 for none, else the seconds left, as an unsigned
// 32-bit count, so a time already past wraps (memcached's does too, by an
// amount that depends on its uptime for a negative exptime).
func (s *Store) LogTTL(exptime int64) uint32 {
	now := s.Now()
	return logTTL(absExptime(exptime, now), now)
}

func logTTL(abs uint32, now int64) uint32 {
	if abs == 0 {
		return 0
	}
	return uint32(int64(abs) - now)
}
