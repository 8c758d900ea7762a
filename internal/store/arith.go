package store

import "strconv"

// IncrDecr adds (or, with decr, subtracts) delta from the decimal value of key.
// incr wraps at 2^64; decr stops at 0. It returns the new value. As memcached
// does, a result no longer than the old value is written in place, padded
// with spaces; a longer one becomes a new item with the old flags and
// exptime. Either way the item gets a new CAS unique.
func (s *Store) IncrDecr(key []byte, delta uint64, decr bool) (uint64, Result) {
	var v uint64
	res := s.Arith(key, ArithRequest{Delta: delta, Decr: decr}, func(it Item, value uint64, _ bool) { v = value })
	return v, res
}

// ArithRequest is an incr/decr with the meta and binary options.
type ArithRequest struct {
	Delta uint64
	Decr  bool
	// CAS, when nonzero, must equal the item's CAS (else Exists).
	CAS uint64
	// Vivify creates a missing item holding Initial (flags 0, no expiry;
	// the callback may set one) instead of failing with NotFound.
	Vivify  bool
	Initial uint64
	// NewCAS, when set, is the changed (or created) item's CAS.
	NewCAS NewCAS
	// Held: a reply not yet written holds the item (memcached's refcount
	// above 2), so the new value goes in a new item, never in place.
	Held bool
}

// Arith runs an incr/decr and, on success, calls fn with the item, its new
// value, and whether it was created by Vivify; fn runs under the item's lock
// and may change its TTL.
func (s *Store) Arith(key []byte, r ArithRequest, fn func(it Item, value uint64, created bool)) Result {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	var digits [20]byte
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		if r.Vivify {
			num := strconv.AppendUint(digits[:0], r.Initial, 10)
			pos, ok := sh.create(s, key, tag, num, now, r.NewCAS)
			if !ok {
				return OutOfMemory
			}
			fn(Item{s: s, sh: sh, pos: pos, now: now}, r.Initial, true)
			return Stored
		}
		if r.Decr {
			sh.st.DecrMisses++
		} else {
			sh.st.IncrMisses++
		}
		return NotFound
	}
	r0 := sh.rec(sh.posOf(slot))
	if r0.vlen() == 0 || s.slabs.chained(r0) || r0.flash() || s.cfg.SlabChunkMax > 0 && r0.mcSize(s.cfg.DisableCAS) > s.cfg.SlabChunkMax {
		return NonNumeric // empty, chunked or on flash in memcached ("too large to be a number")
	}
	if r.CAS != 0 && s.casOf(r0.cas()) != r.CAS {
		return Exists
	}
	cur, ok := parseCounter(r0.value())
	if !ok {
		return NonNumeric
	}
	c := &sh.cls[r0.class()]
	if r.Decr {
		sh.st.DecrHits++
		c.decrHits++
		cur -= min(cur, r.Delta)
	} else {
		sh.st.IncrHits++
		c.incrHits++
		cur += r.Delta
	}
	num := strconv.AppendUint(digits[:0], cur, 10)
	r0.setAccessed(now)
	// In place only when no reader holds the value, as memcached's
	// refcount == 2 test: one sending it in pieces (a ValueRef) would
	// send part of the old value and part of the new.
	if v := r0.value(); len(num) <= len(v) && !r.Held && !sh.pinned(sh.posOf(slot)) {
		for i := copy(v, num); i < len(v); i++ {
			v[i] = ' '
		}
		sh.sizesRemove(r0) // its CAS decides whether it is counted
		sh.stampCAS(r0, r.NewCAS)
		sh.sizesAdd(r0)
		fn(Item{s: s, sh: sh, pos: sh.posOf(slot), now: now}, cur, false)
		return Stored
	}

	flags, exp := r0.flags(), r0.exptime()
	epoch := sh.idx.epoch
	class := s.ItemClass(len(key), len(num), flags)
	pos, res := s.alloc(sh, len(key), len(num), class, now)
	if res != Stored {
		sh.st.OutOfMemory++
		sh.cls[class].outOfMemory++
		return res
	}
	if sh.idx.epoch != epoch {
		slot = sh.find(key, tag)
	}
	nr := sh.rec(pos)
	nr.writeHeader(len(key), len(num), class, flags, exp, sh.casOrNext(r.NewCAS), now)
	nr.markCASChosen(r.NewCAS.chosen())
	copy(nr[recHeader:], key)
	copy(nr[recHeader+len(key):], num)
	sh.link(slot, tag, pos)
	sh.st.TotalItems++ // memcached links a new item here, and counts it
	fn(Item{s: s, sh: sh, pos: pos, now: now}, cur, false)
	return Stored
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// parseCounter reads a value as memcached's incr/decr does (strtoull and its
// checks): optional leading whitespace, an optional sign, at least one
// digit, then the end of the value, whitespace or a NUL. Values above
// 2^64-1 are non-numeric, and so is a '-' that makes the number negative
// ("-0" is 0).
func parseCounter(v []byte) (uint64, bool) {
	i := 0
	for i < len(v) && isSpace(v[i]) {
		i++
	}
	neg := false
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		neg = v[i] == '-'
		i++
	}
	start := i
	var n uint64
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		d := uint64(v[i] - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if i == start {
		return 0, false
	}
	if i < len(v) && !isSpace(v[i]) && v[i] != 0 {
		return 0, false
	}
	if neg {
		n = -n
		if int64(n) < 0 {
			return 0, false
		}
	}
	return n, true
}
