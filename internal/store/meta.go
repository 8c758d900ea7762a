package store

// Operations the meta and binary protocols need beyond the text commands.
// Each takes the shard lock once and, where memcached's meta commands read
// and change an item field by field in the client's flag order, hands the
// protocol an Item for the length of a callback.

// View calls fn with the item stored under key, without counting a get or
// marking the item read (meta debug). It returns false on a miss.
func (s *Store) View(key []byte, fn func(it Item)) bool {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		return false
	}
	fn(Item{s: s, sh: sh, pos: sh.posOf(slot), now: now})
	return true
}

// MetaGet looks key up for the meta get command. On a miss with vivify it
// creates an empty item (flags 0, no expiry, a fresh CAS) and passes it with
// created set, as memcached's N flag does. fn reports whether it touched the
// item (set a new TTL): memcached then counts the hit as a touch
// (cmd_touch, touch_hits) rather than a get. A miss counts as a get miss.
// fn must call it.Bump unless the client asked not to (meta u).
// A created item gets cas when it is set (meta E), else a fresh unique.
func (s *Store) MetaGet(key []byte, vivify bool, cas NewCAS, fn func(it Item, created bool) (touched bool)) bool {
	return s.MetaGetHashed(key, HashKey(key), vivify, cas, fn)
}

// MetaGetHashed is MetaGet for a key whose hash, h, the caller has
// (HashKey). h must be key's: a vivified item is placed by it.
func (s *Store) MetaGetHashed(key []byte, h KeyHash, vivify bool, cas NewCAS, fn func(it Item, created bool) (touched bool)) bool {
	sh, tag := s.shardHashed(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	slot := sh.lookup(key, tag, now)
	found, created := slot >= 0, false
	var pos int
	if found {
		pos = sh.posOf(slot)
	} else if vivify && len(key) <= MaxKeyLen {
		pos, found = sh.create(s, key, tag, nil, now, cas)
		created = found
	}
	if !found {
		sh.st.CmdGet++
		sh.st.GetMisses++
		return false
	}
	it := Item{s: s, sh: sh, pos: pos, now: now}
	if fn(it, created) {
		sh.st.CmdTouch++
		sh.st.TouchHits++
		sh.cls[it.rec().class()].touchHits++
	} else {
		sh.st.CmdGet++
		sh.st.GetHits++
		sh.countHit(it.rec())
	}
	return true
}

// create links a new item for key (known to be absent) with value, flags 0
// and no expiry, and returns its position.
func (sh *shard) create(s *Store, key []byte, tag uint32, value []byte, now uint32, cas NewCAS) (int, bool) {
	class := s.ItemClass(len(key), len(value), 0)
	pos, res := s.alloc(sh, len(key), len(value), class, now)
	if res != Stored {
		sh.st.OutOfMemory++
		sh.cls[class].outOfMemory++
		return 0, false
	}
	r := sh.rec(pos)
	r.writeHeader(len(key), len(value), class, 0, 0, sh.casOrNext(cas), now)
	r.markCASChosen(cas.chosen())
	copy(r[recHeader:], key)
	copy(r[recHeader+len(key):], value)
	sh.link(-1, tag, pos)
	sh.st.TotalItems++
	return pos, true
}

// DeleteRequest is a delete with the meta and binary options.
type DeleteRequest struct {
	// CAS, when HasCAS, must equal the item's CAS or nothing happens (Exists).
	CAS    uint64
	HasCAS bool
	// MissOnMismatch counts a CAS mismatch as a delete miss, as meta delete
	// does; the binary delete counts nothing.
	MissOnMismatch bool
	// Invalidate marks the item stale (new CAS, recache token released)
	// instead of removing it; with SetExptime it also gets Exptime.
	Invalidate bool
	SetExptime bool
	Exptime    int64
	// NewCAS, when set, is the invalidated item's new CAS.
	NewCAS NewCAS
}

// CountDeleteMiss counts a delete of key that found nothing to delete
// without calling DeleteItem (md x: a missing item or a CAS mismatch).
func (s *Store) CountDeleteMiss(key []byte) {
	sh, _ := s.shardFor(key)
	sh.mu.Lock()
	sh.st.DeleteMisses++
	sh.mu.Unlock()
}

// DeleteItem deletes (or invalidates) key: Stored when done, NotFound, or
// Exists on a CAS mismatch.
func (s *Store) DeleteItem(key []byte, r DeleteRequest) Result {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		sh.st.DeleteMisses++
		return NotFound
	}
	rc := sh.rec(sh.posOf(slot))
	if r.HasCAS && s.casOf(rc.cas()) != r.CAS {
		if r.MissOnMismatch {
			sh.st.DeleteMisses++
		}
		return Exists
	}
	if r.Invalidate {
		// memcached counts neither a hit nor a miss here.
		it := Item{s: s, sh: sh, pos: sh.posOf(slot), now: now}
		if r.SetExptime {
			it.SetExptime(r.Exptime)
		}
		rc.setBits(recStale)
		rc.clearBits(recTokenSent)
		sh.sizesRemove(rc) // its CAS decides whether it is counted
		sh.stampCAS(rc, r.NewCAS)
		sh.sizesAdd(rc)
		return Stored
	}
	sh.cls[rc.class()].deleteHits++
	sh.unlink(slot)
	sh.st.DeleteHits++
	return Stored
}

// CountBadChunk counts a store whose text data block lacked its "\r\n":
// memcached allocates the item for the data and counts the set in its class
// before it looks at the block's end, then stores nothing. reserved says the
// data already had its chunk (a reservation the caller gives back);
// otherwise one is taken and given back, as memcached's allocation took
// one, so the class gets its first page (or evicts, in a full class).
func (s *Store) CountBadChunk(key []byte, flags uint32, vlen int, reserved bool) {
	if len(key) > MaxKeyLen || vlen > s.valueRoom(len(key), flags) {
		return
	}
	sh, _ := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.st.CmdSet++
	class := s.ItemClass(len(key), vlen, flags)
	sh.countSet(class)
	if reserved {
		return
	}
	now := clampTime(s.Now())
	if pos, res := s.alloc(sh, len(key), vlen, class, now); res == Stored {
		sh.rec(pos).writeHeader(len(key), vlen, class, flags, 0, 0, now) // (what freeing it reads)
		sh.freeChunkLocked(pos)
	}
}

// Discard removes key without counting anything: what memcached does to the
// old value when a set fails for size or memory.
func (s *Store) Discard(key []byte) {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if slot := sh.lookup(key, tag, clampTime(s.Now())); slot >= 0 {
		sh.unlink(slot)
	}
}
