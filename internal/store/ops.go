package store

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
}

// SetItem stores r and returns the result and, when stored, the new item's
// CAS unique (0 under -C).
func (s *Store) SetItem(r SetRequest) (Result, uint64) {
	key, value, mode := r.Key, r.Value, r.Mode
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.st.CmdSet++
	now64 := s.Now()
	now := clampTime(now64)

	if len(key)+len(value) > s.maxValue || len(key) > MaxKeyLen {
		if mode == ModeSet {
			// As memcached: a failed set must not leave the old value visible.
			if slot := sh.find(key, tag); slot >= 0 {
				sh.unlink(slot)
			}
		}
		return TooLarge, 0
	}
	slot := sh.lookup(key, tag, now)
	var old rec
	if slot >= 0 {
		old = sh.rec(sh.posOf(slot))
	}
	exp := absExptime(r.Exptime, now64)
	flags := r.Flags
	var bits uint8
	if r.KeyBinary {
		bits |= recKeyBinary
	}
	switch mode {
	case ModeAdd:
		if slot >= 0 {
			return NotStored, 0
		}
	case ModeReplace:
		if slot < 0 {
			return NotStored, 0
		}
	case ModeAppend, ModePrepend:
		if slot < 0 {
			return NotStored, 0
		}
		if r.CAS != 0 && !s.cfg.DisableCAS && old.cas() != r.CAS {
			return Exists, 0
		}
	case ModeCAS:
		if slot < 0 {
			sh.st.CasMisses++
			return NotFound, 0
		}
		switch {
		case !s.cfg.DisableCAS && r.CAS != 0 && old.cas() == r.CAS:
		case !s.cfg.DisableCAS && r.Invalidate && r.CAS != 0 && r.CAS < old.cas():
			// memcached stores a stale value: the old TTL and token stay.
			exp = old.exptime()
			bits |= recStale | old.bits()&recTokenSent
		default:
			sh.st.CasBadval++
			sh.cls[old.class()].casBadval++
			return Exists, 0
		}
		sh.st.CasHits++
		sh.cls[old.class()].casHits++
	}

	vlen := len(value)
	if mode == ModeAppend || mode == ModePrepend {
		flags, exp = old.flags(), old.exptime()
		vlen += old.vlen()
		if len(key)+vlen > s.maxValue {
			return NotStored, 0 // memcached 1.6.18 answers NOT_STORED and keeps the item
		}
		// The allocation below may evict or move the old record: keep its value.
		sh.scratch = append(sh.scratch[:0], old.value()...)
		defer sh.dropLargeScratch()
	} else if exp != 0 && exp <= now {
		// Already expired (negative exptime): memcached links the item and its
		// LRU reclaims it at once; the visible effect is the old value gone.
		if slot >= 0 {
			sh.unlink(slot)
		}
		sh.st.TotalItems++
		sh.st.Reclaimed++
		sh.st.ExpiredUnfetched++
		return Stored, s.casOf(sh.casOrNext(r.NewCAS))
	}

	size := recSize(len(key), vlen)
	epoch := sh.idx.epoch
	pos, res := sh.alloc(size, now)
	if res != Stored {
		sh.st.OutOfMemory++
		sh.cls[s.classes.classOf(size)].outOfMemory++
		if mode == ModeSet {
			if slot = sh.find(key, tag); slot >= 0 {
				sh.unlink(slot)
			}
		}
		return res, 0
	}
	if sh.idx.epoch != epoch {
		slot = sh.find(key, tag)
	}
	class := s.classes.classOf(size)
	nr := sh.rec(pos)
	cas := sh.casOrNext(r.NewCAS)
	nr.writeHeader(len(key), vlen, class, flags, exp, cas, now)
	nr.setBits(bits)
	copy(nr[recHeader:], key)
	v := nr[recHeader+len(key) : recHeader+len(key)+vlen]
	switch mode {
	case ModeAppend:
		copy(v[copy(v, sh.scratch):], value)
	case ModePrepend:
		copy(v[copy(v, value):], sh.scratch)
	default:
		copy(v, value)
	}
	sh.link(slot, tag, pos)
	sh.st.TotalItems++
	sh.cls[class].cmdSet++
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
func (s *Store) Get(key []byte, fn func(value []byte, m Meta)) bool {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	sh.st.CmdGet++
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		sh.st.GetMisses++
		return false
	}
	r := sh.rec(sh.posOf(slot))
	sh.st.GetHits++
	sh.cls[r.class()].getHits++
	r.setBits(recFetched | recReferenced)
	r.setAccessed(now)
	fn(r.value(), s.meta(r))
	return true
}

// GetAndTouch is Get that also sets a new exptime (gat/gats). Like memcached
// it counts as a touch (cmd_touch, touch_hits/touch_misses), not as a get.
func (s *Store) GetAndTouch(key []byte, exptime int64, fn func(value []byte, m Meta)) bool {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now64 := s.Now()
	now := clampTime(now64)
	sh.st.CmdTouch++
	slot := sh.touch(key, tag, absExptime(exptime, now64), now)
	if slot < 0 {
		return false
	}
	r := sh.rec(sh.posOf(slot))
	r.setBits(recFetched)
	fn(r.value(), s.meta(r))
	return true
}

// Touch sets a new exptime on key.
func (s *Store) Touch(key []byte, exptime int64) bool {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now64 := s.Now()
	sh.st.CmdTouch++
	return sh.touch(key, tag, absExptime(exptime, now64), clampTime(now64)) >= 0
}

// touch gives the item for key a new exptime and returns its slot, or -1.
func (sh *shard) touch(key []byte, tag uint32, exp uint32, now uint32) int {
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		sh.st.TouchMisses++
		return -1
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
	r.setBits(recFetched | recReferenced)
	r.setAccessed(now)
	return slot
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
