package store

import "strconv"

// IncrDecr adds (or, with decr, subtracts) delta from the decimal value of key.
// incr wraps at 2^64; decr stops at 0. It returns the new value. As memcached
// does, a result no longer than the old value is written in place, padded
// with spaces; a longer one becomes a new item with the old flags and
// exptime. Either way the item gets a new CAS unique.
func (s *Store) IncrDecr(key []byte, delta uint64, decr bool) (uint64, Result) {
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		if decr {
			sh.st.DecrMisses++
		} else {
			sh.st.IncrMisses++
		}
		return 0, NotFound
	}
	r := sh.rec(sh.posOf(slot))
	cur, ok := parseCounter(r.value())
	if !ok {
		return 0, NonNumeric
	}
	c := &sh.cls[r.class()]
	if decr {
		sh.st.DecrHits++
		c.decrHits++
		cur -= min(cur, delta)
	} else {
		sh.st.IncrHits++
		c.incrHits++
		cur += delta
	}
	var digits [20]byte
	num := strconv.AppendUint(digits[:0], cur, 10)
	r.setAccessed(now)
	if v := r.value(); len(num) <= len(v) {
		for i := copy(v, num); i < len(v); i++ {
			v[i] = ' '
		}
		r.setCAS(sh.nextCAS())
		return cur, Stored
	}

	flags, exp := r.flags(), r.exptime()
	size := recSize(len(key), len(num))
	epoch := sh.idx.epoch
	pos, res := sh.alloc(size, now)
	if res != Stored {
		sh.st.OutOfMemory++
		sh.cls[s.classes.classOf(size)].outOfMemory++
		return 0, res
	}
	if sh.idx.epoch != epoch {
		slot = sh.find(key, tag)
	}
	nr := sh.rec(pos)
	nr.writeHeader(len(key), len(num), s.classes.classOf(size), flags, exp, sh.nextCAS(), now)
	copy(nr[recHeader:], key)
	copy(nr[recHeader+len(key):], num)
	sh.link(slot, tag, pos)
	sh.st.TotalItems++ // memcached links a new item here, and counts it
	return cur, Stored
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
