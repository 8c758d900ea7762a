package store

import "sync"

// Set stores value under key according to mode. cas is compared only in ModeCAS.
func (s *Store) Set(mode Mode, key []byte, flags uint32, exptime int64, value []byte, cas uint64) Result {
	res, _ := s.SetItem(SetRequest{Mode: mode, Key: key, Flags: flags, Exptime: exptime, Value: value, CAS: cas})
	return res
}

// SetRequest is one storage command with every option the three protocols
// have between them.
type SetRequest struct {
	Mode    Mode
	Key     []byte
	Flags   uint32
	Exptime int64 // as the client sent it
	Value   []byte
	// CAS is compared in ModeCAS (0 never matches, as in memcached), and,
	// when nonzero, in ModeAppend and ModePrepend; other modes ignore it.
	CAS uint64
	// Invalidate (meta I): in ModeCAS a CAS older than the item's still
	// stores, but the new value is marked stale and keeps the old exptime.
	Invalidate bool
	// KeyBinary records that the key arrived base64-encoded (meta b), so
	// that meta replies encode it again.
	KeyBinary bool
	// NewCAS, when set, is the stored item's CAS instead of a fresh one.
	NewCAS NewCAS
	// Tombstone: the store is md x's empty item (ModeCAS on the item just
	// read), which memcached counts as a delete hit in the new item's
	// class (TombstoneHit), not as a set or a cas; md x I then marks it
	// stale and memcached counts nothing at all.
	Tombstone, TombstoneHit bool
	// Again: the same request's data stored once more (ms MA N's add after
	// its append missed, and the append retried): memcached stores it
	// once, so it counts as a set once.
	Again bool
}

// SetItem stores r and returns the result and, when stored, the new item's
// CAS unique (0 under -C).
func (s *Store) SetItem(r SetRequest) (Result, uint64) {
	sh, tag := s.shardFor(r.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return s.setLocked(sh, tag, &r)
}

// setPlan is what the mode rules decided for a store that goes ahead: the
// index slot of the item it replaces (or -1) and the new item's fields.
type setPlan struct {
	slot  int
	old   rec
	exp   uint32
	flags uint32
	bits  uint8
}

// plan applies the rules of r.Mode (existence, CAS) with the shard locked.
// When the command ends there it returns done with the result.
func (s *Store) plan(sh *shard, tag uint32, r *SetRequest, now64 int64, now uint32) (p setPlan, res Result, done bool) {
	key, mode := r.Key, r.Mode
	p.slot = sh.lookup(key, tag, now)
	if p.slot >= 0 {
		p.old = sh.rec(sh.posOf(p.slot))
	}
	p.exp = absExptime(r.Exptime, now64)
	p.flags = r.Flags
	if r.KeyBinary {
		p.bits |= recKeyBinary
	}
	old := p.old
	switch mode {
	case ModeAdd:
		if p.slot >= 0 {
			return p, NotStored, true
		}
	case ModeReplace:
		if p.slot < 0 {
			return p, NotStored, true
		}
	case ModeAppend, ModePrepend:
		if p.slot < 0 {
			return p, NotStored, true
		}
		if r.CAS != 0 && !s.cfg.DisableCAS && old.cas() != r.CAS {
			return p, Exists, true
		}
		if old.flash() {
			return p, NotStored, true // memcached refuses to append to a flash item
		}
	case ModeCAS:
		if p.slot < 0 {
			if !r.Tombstone {
				sh.st.CasMisses++
			}
			return p, NotFound, true
		}
		switch {
		case !s.cfg.DisableCAS && r.CAS != 0 && old.cas() == r.CAS:
		case !s.cfg.DisableCAS && r.Invalidate && r.CAS != 0 && r.CAS < old.cas():
			// memcached stores a stale value: the old TTL and token stay.
			p.exp = old.exptime()
			p.bits |= recStale | old.bits()&recTokenSent
		default:
			if !r.Tombstone {
				sh.st.CasBadval++
				sh.cls[old.class()].casBadval++
			}
			return p, Exists, true
		}
		if !r.Tombstone {
			sh.st.CasHits++
			sh.cls[old.class()].casHits++
		}
	}
	return p, Stored, false
}

// noMemory counts a store refused for lack of memory; a failed set must
// not leave the old value visible, as in memcached.
func (s *Store) noMemory(sh *shard, tag uint32, mode Mode, key []byte, class int) {
	sh.st.OutOfMemory++
	sh.cls[class].outOfMemory++
	if mode == ModeSet {
		if slot := sh.find(key, tag); slot >= 0 {
			sh.unlink(slot)
		}
	}
}

// setLocked is SetItem with the shard locked.
func (s *Store) setLocked(sh *shard, tag uint32, r *SetRequest) (Result, uint64) {
	key, value, mode := r.Key, r.Value, r.Mode
	uncounted := r.Tombstone || r.Again
	if !uncounted {
		sh.st.CmdSet++
	}
	now64 := s.Now()
	now := clampTime(now64)

	if len(value) > s.valueRoom(len(key), r.Flags) || len(key) > MaxKeyLen {
		if mode == ModeSet {
			// As memcached: a failed set must not leave the old value visible.
			if slot := sh.find(key, tag); slot >= 0 {
				sh.unlink(slot)
			}
		}
		return TooLarge, 0
	}
	class := s.ItemClass(len(key), len(value), r.Flags)
	if !uncounted {
		sh.countSet(class)
	}
	if sh.flushSweepAt|sh.flushPending != 0 { // (tested here so the common case makes no call)
		s.pullFlushed(sh, class, now) // before the lookup, as memcached allocates before it looks
	}
	// As memcached's process_update_command, the item for the request's
	// data is allocated before the key is looked up: a store that then
	// fails (an add of a present key, a cas mismatch) has still taken a
	// chunk, and a page for a class that had none, and has evicted in a
	// full class. Index slots may move meanwhile, so plan looks up after.
	pos, res := s.alloc(sh, len(key), len(value), class, now)
	if res != Stored {
		s.noMemory(sh, tag, mode, key, class)
		return res, 0
	}
	nr := sh.rec(pos)
	nr.writeHeader(len(key), len(value), class, r.Flags, 0, 0, now) // (what freeing it reads)
	p, res, done := s.plan(sh, tag, r, now64, now)
	if done {
		sh.freeChunkLocked(pos)
		return res, 0
	}
	if mode == ModeAppend || mode == ModePrepend {
		// The data's chunk goes once the combined item is written.
		defer sh.freeChunkLocked(pos)
		return s.appendLocked(sh, tag, r, p, now)
	}
	cas := sh.casOrNext(r.NewCAS)
	nr.writeHeader(len(key), len(value), class, p.flags, p.exp, cas, now)
	nr.markCASChosen(r.NewCAS.chosen())
	nr.setBits(p.bits)
	copy(nr[recHeader:], key)
	s.slabs.writeValue(uint64(pos), 0, value)
	sh.link(p.slot, tag, pos)
	sh.st.TotalItems++
	if r.TombstoneHit {
		sh.st.DeleteHits++
		sh.cls[class].deleteHits++
	}
	return Stored, s.casOf(cas)
}

// copyInto copies the n-byte value of the record at from into the value
// of the record at to, from off on, piece by piece as each lies in its
// chunks (no buffer between).
func (s *Store) copyInto(to uint64, off int, from uint64, n int) {
	s.slabs.walkValue(from, 0, n, func(part []byte, at int) { s.slabs.writeValue(to, off+at, part) })
}

// appendLocked stores the item an append or prepend makes of the old
// item p names and r's value, in a chunk of its own class.
func (s *Store) appendLocked(sh *shard, tag uint32, r *SetRequest, p setPlan, now uint32) (Result, uint64) {
	key, value := r.Key, r.Value
	p.flags, p.exp = p.old.flags(), p.old.exptime()
	vlen := len(value) + p.old.vlen()
	if vlen > s.valueRoom(len(key), p.flags) {
		return NotStored, 0 // memcached 1.6.18 answers NOT_STORED and keeps the item
	}
	// The allocation below may evict the old record and hand its chunk out
	// again, so the record is pinned (cursor.go) until its value is copied.
	oldPos := sh.posOf(p.slot)
	sh.refOf(oldPos, p.old)
	defer sh.unpin(oldPos)
	class := s.ItemClass(len(key), vlen, p.flags) // the whole item's
	epoch := sh.idx.epoch
	pos, res := s.alloc(sh, len(key), vlen, class, now)
	if res != Stored {
		s.noMemory(sh, tag, r.Mode, key, class)
		return res, 0
	}
	slot := p.slot
	if sh.idx.epoch != epoch {
		slot = sh.find(key, tag)
	}
	nr := sh.rec(pos)
	cas := sh.casOrNext(r.NewCAS)
	nr.writeHeader(len(key), vlen, class, p.flags, p.exp, cas, now)
	nr.markCASChosen(r.NewCAS.chosen())
	nr.setBits(p.bits)
	copy(nr[recHeader:], key)
	oldLen := vlen - len(value)
	if r.Mode == ModePrepend {
		s.slabs.writeValue(uint64(pos), 0, value)
		s.copyInto(uint64(pos), len(value), uint64(oldPos), oldLen)
	} else {
		s.copyInto(uint64(pos), 0, uint64(oldPos), oldLen)
		s.slabs.writeValue(uint64(pos), oldLen, value)
	}
	sh.link(slot, tag, pos)
	sh.st.TotalItems++
	return Stored, s.casOf(cas)
}

// casOf is the CAS unique clients see: 0 under -C.
func (s *Store) casOf(c uint64) uint64 {
	if s.cfg.DisableCAS {
		return 0
	}
	return c
}

// Get calls fn with the value of key if it is present; value is valid only during fn.
// A value on flash is read before Get returns (GetFlash does not wait).
func (s *Store) Get(key []byte, fn func(value []byte, m Meta)) bool {
	hit, fh, onFlash := s.getItem(key, HashKey(key), fn)
	if !onFlash {
		return hit
	}
	return s.readFlashNow(key, fh, false, fn)
}

// GetFlash is Get for a caller that must not wait for flash: when key's
// value is on flash it fills fr instead of calling fn and reports onFlash;
// the caller starts fr (FlashRead.Start). The lookup is counted as Get's.
func (s *Store) GetFlash(key []byte, fn func(value []byte, m Meta), fr *FlashRead) (hit, onFlash bool) {
	return s.GetFlashHashed(key, HashKey(key), fn, fr)
}

// GetFlashHashed is GetFlash for a key whose hash, h, the caller has
// (HashKey). A wrong h finds nothing.
func (s *Store) GetFlashHashed(key []byte, h KeyHash, fn func(value []byte, m Meta), fr *FlashRead) (hit, onFlash bool) {
	hit, fh, onFlash := s.getItem(key, h, fn)
	if onFlash {
		fr.fill(s, key, fh)
	}
	return hit, onFlash
}

// getItem is Get's lookup of key, whose hash is h: a value on flash is
// returned as fh.
func (s *Store) getItem(key []byte, h KeyHash, fn func(value []byte, m Meta)) (hit bool, fh flashHit, onFlash bool) {
	sh, tag := s.shardHashed(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	sh.st.CmdGet++
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		sh.st.GetMisses++
		return false, fh, false
	}
	r := sh.rec(sh.posOf(slot))
	sh.st.GetHits++
	sh.countHit(r)
	queue := r.queue() // where the hit was counted, before a bump moves it
	active := sh.markRead(r, sh.posOf(slot), now)
	if r.flash() {
		fh := s.flashHitOf(r)
		fh.queue, fh.active = uint8(queue), active
		return true, fh, true
	}
	s.withValue(sh.posOf(slot), r, fn)
	return true, fh, false
}

// chainBufs holds the buffers a chained item's value is copied into for a
// Get callback, between uses: a sync.Pool, so the collector empties it
// when such gets stop.
var chainBufs sync.Pool // of *[]byte

// withValue calls fn with the value of the record r at pos and its meta:
// a slice of its chunk, or for a chain, its value copied out whole.
func (s *Store) withValue(pos int, r rec, fn func(value []byte, m Meta)) {
	if !s.slabs.chained(r) {
		fn(r.value(), s.meta(r))
		return
	}
	bp, _ := chainBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	*bp = s.slabs.appendValue((*bp)[:0], uint64(pos))
	fn(*bp, s.meta(r))
	chainBufs.Put(bp)
}

// GetAndTouch is Get that also sets a new exptime (gat/gats). Like memcached
// it counts as a touch (cmd_touch, touch_hits/touch_misses), not as a get.
func (s *Store) GetAndTouch(key []byte, exptime int64, fn func(value []byte, m Meta)) bool {
	hit, fh, onFlash := s.gatItem(key, exptime, fn)
	if !onFlash {
		return hit
	}
	return s.readFlashNow(key, fh, true, fn)
}

// GetAndTouchFlash is GetAndTouch that fills fr for a value on flash, as
// GetFlash does.
func (s *Store) GetAndTouchFlash(key []byte, exptime int64, fn func(value []byte, m Meta), fr *FlashRead) (hit, onFlash bool) {
	hit, fh, onFlash := s.gatItem(key, exptime, fn)
	if onFlash {
		fr.fill(s, key, fh)
	}
	return hit, onFlash
}

// gatItem is GetAndTouch's lookup: a value on flash is returned as fh.
func (s *Store) gatItem(key []byte, exptime int64, fn func(value []byte, m Meta)) (hit bool, fh flashHit, onFlash bool) {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now64 := s.Now()
	now := clampTime(now64)
	sh.st.CmdTouch++
	slot, th := sh.touch(key, tag, absExptime(exptime, now64), now)
	if slot < 0 {
		return false, fh, false
	}
	r := sh.rec(sh.posOf(slot))
	r.setBits(recFetched)
	if r.flash() {
		fh := s.flashHitOf(r)
		fh.queue, fh.active = th.queue, th.active
		return true, fh, true
	}
	s.withValue(sh.posOf(slot), r, fn)
	return true, fh, false
}

// Touch sets a new exptime on key.
func (s *Store) Touch(key []byte, exptime int64) bool {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now64 := s.Now()
	sh.st.CmdTouch++
	slot, _ := sh.touch(key, tag, absExptime(exptime, now64), clampTime(now64))
	return slot >= 0
}

// touchHit is where a touch counted its hit, and whether the touch left
// the item active (markRead), for a read of its value from flash.
type touchHit struct {
	queue  uint8
	active bool
}

// touch gives the item for key a new exptime and returns its slot, or -1.
func (sh *shard) touch(key []byte, tag uint32, exp uint32, now uint32) (int, touchHit) {
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		sh.st.TouchMisses++
		return -1, touchHit{}
	}
	r := sh.rec(sh.posOf(slot))
	sh.st.TouchHits++
	sh.cls[r.class()].touchHits++
	if (r.exptime() != 0) != (exp != 0) {
		if exp != 0 {
			sh.expiring++
		} else {
			sh.expiring--
		}
	}
	r.setExptime(exp)
	// A touch is a fetch to memcached (it bumps the item with DO_UPDATE).
	hit := touchHit{queue: uint8(r.queue())}
	hit.active = sh.markRead(r, sh.posOf(slot), now)
	return slot, hit
}

// Delete removes key.
func (s *Store) Delete(key []byte) bool {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	slot := sh.lookup(key, tag, clampTime(s.Now()))
	if slot < 0 {
		sh.st.DeleteMisses++
		return false
	}
	sh.cls[sh.rec(sh.posOf(slot)).class()].deleteHits++
	sh.unlink(slot)
	sh.st.DeleteHits++
	return true
}
