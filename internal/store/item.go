package store

// Item is a view of one stored item with its shard locked: the meta
// protocol reads and changes several fields of an item in the order the
// client's flags ask (a TTL read before or after a touch, a win token taken
// or not), and memcached does all of it under the item's lock, so the store
// hands the protocol the item itself for the length of a callback instead of
// growing one method per combination of flags.
//
// An Item is a small value (no allocation) and is valid only inside the
// callback that received it; its Value must not be kept after.
type Item struct {
	s   *Store
	sh  *shard
	pos int
	now uint32
}

func (it Item) rec() rec { return it.sh.rec(it.pos) }

// Key returns the item's key (raw bytes, base64-decoded if it was sent so).
func (it Item) Key() []byte { return it.rec().key() }

// Value returns the item's value: a slice of its chunk, valid while the
// item's callback runs, or for a chained item a copy; nil for a flash
// item (see Flash).
func (it Item) Value() []byte {
	if r := it.rec(); r.flash() {
		return nil
	} else if !it.s.slabs.chained(r) {
		return r.value()
	}
	return it.AppendValue(nil)
}

// ValueLen is the value's length.
func (it Item) ValueLen() int { return it.rec().vlen() }

// ValueHead is the value's leading part that lies in one piece: all of it,
// or a chained item's part in its head chunk; nil for a flash item.
func (it Item) ValueHead() []byte {
	r := it.rec()
	if r.flash() {
		return nil
	}
	if !it.s.slabs.chained(r) {
		return r.value()
	}
	off := it.s.slabs.valueOff(r)
	return r[off : off+min(r.vlen(), it.s.slabs.headRoom(r.klen()))]
}

// AppendValue appends the value to dst; a flash item's is not appended.
func (it Item) AppendValue(dst []byte) []byte {
	if it.rec().flash() {
		return dst
	}
	return it.s.slabs.appendValue(dst, uint64(it.pos))
}

// Flash reports whether the item's value is on flash. Value, ValueHead
// and AppendValue then give none: the caller takes a FlashRead
// (FlashRead), which holds the item's location, length and key, and
// starts it once the callback has returned. A disk read while the
// callback runs would hold the shard's lock for it, stalling every other
// key of the shard, and the LRU maintainer and page mover that try it.
func (it Item) Flash() bool { return it.rec().flash() }

// FlashRead fills fr to read a flash item's value (see Flash).
func (it Item) FlashRead(fr *FlashRead) { r := it.rec(); fr.fill(it.s, r.key(), it.s.flashHitOf(r)) }

// Flags returns the client flags.
func (it Item) Flags() uint32 { return it.rec().flags() }

// CAS returns the CAS unique (0 under -C).
func (it Item) CAS() uint64 { return it.s.casOf(it.rec().cas()) }

// TTL returns the seconds left before the item expires, or -1 if it never
// does (memcached's meta t flag).
func (it Item) TTL() int64 {
	e := it.rec().exptime()
	if e == 0 {
		return -1
	}
	return int64(e) - int64(it.now)
}

// Exptime returns the absolute expiry time in unix seconds, 0 for never.
func (it Item) Exptime() int64 { return int64(it.rec().exptime()) }

// SetExptime gives the item a new expiry from a client exptime (relative,
// absolute or negative, by memcached's rules).
func (it Item) SetExptime(exptime int64) {
	it.setAbsExptime(absExptime(exptime, int64(it.now)))
}

func (it Item) setAbsExptime(e uint32) {
	r := it.rec()
	if (r.exptime() != 0) != (e != 0) {
		if e != 0 {
			it.sh.expiring++
		} else {
			it.sh.expiring--
		}
	}
	r.setExptime(e)
}

// AbsExptime converts a client exptime to absolute unix seconds (0 = never)
// at the item's clock, for comparisons such as the meta R flag's.
func (it Item) AbsExptime(exptime int64) int64 {
	return int64(absExptime(exptime, int64(it.now)))
}

// Fetched reports whether the item was read before (meta h, me fetch).
func (it Item) Fetched() bool { return it.rec().bits()&recFetched != 0 }

// IdleSeconds is the time since the item was last accessed (meta l, me la).
func (it Item) IdleSeconds() int64 {
	a := it.rec().accessed()
	if a > it.now {
		return 0
	}
	return int64(it.now - a)
}

// Stale reports whether the item was invalidated (meta X).
func (it Item) Stale() bool { return it.rec().bits()&recStale != 0 }

// TokenSent reports whether a client already won the recache token (meta Z).
func (it Item) TokenSent() bool { return it.rec().bits()&recTokenSent != 0 }

// SetTokenSent records that a client won the recache token (meta W).
func (it Item) SetTokenSent() { it.rec().setBits(recTokenSent) }

// KeyBinary reports whether the key was stored base64-encoded (meta b).
func (it Item) KeyBinary() bool { return it.rec().bits()&recKeyBinary != 0 }

// Bump marks the item as read now: fetched, recently used, accessed.
func (it Item) Bump() {
	it.sh.markRead(it.rec(), it.pos, it.now)
}

// Size returns the item's size as memcached accounts it (ITEM_ntotal),
// which meta debug reports.
func (it Item) Size() int { return it.rec().mcSize(it.s.cfg.DisableCAS) }

// Class returns the slab class memcached would keep the item in: the one
// its record was written with (Store.ItemClass of its sizes and flags).
func (it Item) Class() int { return it.rec().class() }
