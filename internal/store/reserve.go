package store

// Values received into the ring.
//
// A storage command whose value is still arriving reserves its record at
// the ring's head when its line is parsed, so the bytes in flight count
// against the memory limit and need no buffer of their own; the protocol
// copies each part in as it arrives (FillReserved) and commits on the
// value's end (CommitReserved), which runs the command's rules then.
//
// Until then the record is written with its header and key but marked dead
// and left out of the index: no lookup, dump, statistic or walker sees it,
// and the ring's tail drops it like any dead record when it gets there. A
// reservation the tail has passed is lost (its space may already hold other
// records): filling it stops, and the commit answers OutOfMemory, which is
// what memcached answers when it cannot allocate the item at all. Unlike
// memcached, whose item being read is pinned, a reservation thus competes
// with the stores that follow it: a value that trickles in while a full
// ring turns over is refused rather than evicting everything else.

// Reservation is a record reserved for a value being received. The zero
// value is a lost reservation.
type Reservation struct {
	ref ValueRef // on a failed Reserve only vlen is set
	ok  bool
	// made is whether room was reserved at all (a reservation lost later
	// was made; one refused at once was not): memcached counts a store's
	// class only once it has allocated the item.
	made bool
}

// Lost reports whether the reservation can no longer be committed.
func (rv *Reservation) Lost() bool { return !rv.ok }

// Len is the length of the value the reservation was made for.
func (rv *Reservation) Len() int { return int(rv.ref.vlen) }

// Reserve makes room for a value of vlen bytes under key. A key and value
// too large for the store, or a shard that cannot make room (-M), give a
// lost reservation; the commit then reports the failure.
func (s *Store) Reserve(key []byte, vlen int) Reservation {
	failed := Reservation{ref: ValueRef{vlen: uint32(max(vlen, 0))}}
	if len(key)+vlen > s.maxValue || len(key) > MaxKeyLen || vlen < 0 {
		return failed
	}
	sh, _ := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	size := recSize(len(key), vlen)
	if sh.flushSweepAt|sh.flushPending != 0 {
		sh.pullTail(now)
	}
	pos, res := sh.alloc(size, now)
	if res != Stored {
		return failed
	}
	r := sh.rec(pos)
	r.writeHeader(len(key), vlen, s.ItemClass(len(key), vlen, 0), 0, 0, 0, now)
	r.setBits(recDead)
	copy(r[recHeader:], key)
	return Reservation{ref: sh.refOf(pos, r), ok: true, made: true}
}

// held reports whether the tail has not yet passed the reservation, with
// the shard locked; it marks and counts a reservation found lost.
func (sh *shard) held(rv *Reservation) bool {
	if rv.ok && rv.ref.gen == sh.gen && sh.vtail <= rv.ref.born {
		return true
	}
	if rv.ok {
		rv.ok = false
		sh.st.ReservationsLost++
	}
	return false
}

// FillReserved copies src into the reserved value at offset off. It returns
// false, copying nothing, once the reservation is lost.
func (s *Store) FillReserved(rv *Reservation, off int, src []byte) bool {
	if !rv.ok {
		return false
	}
	if off < 0 || off+len(src) > int(rv.ref.vlen) {
		rv.ok = false
		return false
	}
	sh := &s.shards[rv.ref.shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.held(rv) {
		return false
	}
	copy(sh.buf[rv.ref.pos+int(rv.ref.voff)+off:], src)
	return true
}

// CommitReserved runs the storage command r (whose Value is ignored: the
// value is the reservation's) as SetItem would and returns the same
// results. A set, add, replace or cas links the reserved record where it
// lies; append and prepend combine it with the old value into a new
// record. A lost reservation answers OutOfMemory. Either way the
// reservation is used up.
func (s *Store) CommitReserved(rv *Reservation, r SetRequest) (Result, uint64) {
	sh, tag := s.shardFor(r.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ref := rv.ref
	if !rv.ok || &s.shards[ref.shard] != sh || !sh.held(rv) ||
		string(sh.rec(ref.pos).key()) != string(r.Key) {
		rv.ok = false
		sh.st.CmdSet++
		class := s.ItemClass(len(r.Key), int(ref.vlen), r.Flags)
		if rv.made {
			sh.countSet(class) // lost after memcached would have allocated it
		}
		s.noMemory(sh, tag, r.Mode, r.Key, class)
		return OutOfMemory, 0
	}
	rv.ok = false
	pos, vlen := ref.pos, int(ref.vlen)
	value := sh.buf[pos+int(ref.voff) : pos+int(ref.voff)+vlen]
	if r.Mode == ModeAppend || r.Mode == ModePrepend {
		// A new record is allocated, which may overwrite the reserved one:
		// the value goes through a copy. Appends of large values are rare.
		r.Value = append([]byte(nil), value...)
		return s.setLocked(sh, tag, &r)
	}
	sh.st.CmdSet++
	class := s.ItemClass(len(r.Key), vlen, r.Flags)
	sh.countSet(class)
	now64 := s.Now()
	now := clampTime(now64)
	p, res, done := s.plan(sh, tag, &r, now64, now)
	if done {
		return res, 0
	}
	size := recSize(len(r.Key), vlen)
	epoch := sh.idx.epoch
	if p.flags != r.Flags {
		class = s.ItemClass(len(r.Key), vlen, p.flags)
	}
	if sh.noEvict && sh.noEvictFull(size, now) {
		s.noMemory(sh, tag, r.Mode, r.Key, class)
		return OutOfMemory, 0
	}
	if sh.idx.epoch != epoch {
		p.slot = sh.find(r.Key, tag)
	}
	nr := sh.rec(pos)
	cas := sh.casOrNext(r.NewCAS)
	nr.writeHeader(len(r.Key), vlen, class, p.flags, p.exp, cas, now)
	nr.setBits(p.bits)
	sh.link(p.slot, tag, pos)
	sh.st.TotalItems++
	return Stored, s.casOf(cas)
}
