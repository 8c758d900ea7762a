package store

// Values received into a chunk.
//
// A storage command whose value is still arriving allocates its chunk when
// its line is parsed, as memcached allocates the item before reading the
// data, so the bytes in flight count against the memory limit and need no
// buffer of their own; the protocol copies each part in as it arrives
// (FillReserved) and commits on the value's end (CommitReserved), which
// runs the command's rules then, or gives the chunk back (ReleaseReserved)
// when the value is not stored (bad data, a closed connection).
//
// Until then the record is written with its header and key but marked dead
// and is in no queue and no index: no lookup, dump, statistic, walker or
// eviction sees it.

// Reservation is a chunk reserved for a value being received. The zero
// value holds none (a failed or used-up reservation).
type Reservation struct {
	ref ValueRef // on a failed Reserve only vlen is set
	ok  bool
	// made is whether room was reserved at all (a reservation lost later
	// was made; one refused at once was not): memcached counts a store's
	// class only once it has allocated the item.
	made bool
}

// Lost reports whether the reservation holds no chunk: the allocation
// failed, or it was committed or released.
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
	class := s.ItemClass(len(key), vlen, 0)
	if sh.flushSweepAt|sh.flushPending != 0 {
		s.pullFlushed(sh, class, now)
	}
	pos, res := s.alloc(sh, len(key), vlen, class, now)
	if res != Stored {
		return failed
	}
	r := sh.rec(pos)
	r.writeHeader(len(key), vlen, class, 0, 0, 0, now)
	r.setBits(recDead)
	copy(r[recHeader:], key)
	// (not pinned: the chunk is the reservation's alone until committed)
	ref := ValueRef{pos: pos, vlen: uint32(vlen), voff: uint32(s.slabs.valueOff(r)), shard: uint32(sh.id), ok: true}
	return Reservation{ref: ref, ok: true, made: true}
}

// ReleaseReserved gives an uncommitted reservation's chunk back; a used
// up or failed one is left alone.
func (s *Store) ReleaseReserved(rv *Reservation) {
	if !rv.ok {
		return
	}
	rv.ok = false
	sh := &s.shards[rv.ref.shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.freeChunkLocked(rv.ref.pos)
}

// FillReserved copies src into the reserved value at offset off. It returns
// false, copying nothing, for a range outside the value or a reservation
// that holds no chunk.
func (s *Store) FillReserved(rv *Reservation, off int, src []byte) bool {
	if !rv.ok {
		return false
	}
	if off < 0 || off+len(src) > int(rv.ref.vlen) {
		s.ReleaseReserved(rv) // (a lost reservation is never released again: its chunk would leak)
		return false
	}
	sh := &s.shards[rv.ref.shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !rv.ok {
		return false
	}
	s.slabs.writeValue(uint64(rv.ref.pos), off, src)
	return true
}

// CommitReserved runs the storage command r (whose Value is ignored: the
// value is the reservation's) as SetItem would and returns the same
// results. A set, add, replace or cas links the reserved record where it
// lies; append and prepend combine it with the old value into a new
// record. A reservation without a chunk answers OutOfMemory. Either way
// the reservation is used up, its chunk linked or given back.
func (s *Store) CommitReserved(rv *Reservation, r SetRequest) (Result, uint64) {
	sh, tag := s.shardFor(r.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ref := rv.ref
	if !rv.ok || &s.shards[ref.shard] != sh || string(sh.rec(ref.pos).key()) != string(r.Key) {
		if rv.ok {
			rv.ok = false
			sh.freeChunkLocked(ref.pos) // (only its class lock is needed)
		}
		sh.st.CmdSet++
		class := s.ItemClass(len(r.Key), int(ref.vlen), r.Flags)
		if rv.made {
			sh.countSet(class) // failed after memcached would have allocated it
		}
		s.noMemory(sh, tag, r.Mode, r.Key, class)
		return OutOfMemory, 0
	}
	rv.ok = false
	pos, vlen := ref.pos, int(ref.vlen)
	chunkClass := sh.rec(pos).class()
	if r.Mode == ModeAppend || r.Mode == ModePrepend || s.ItemClass(len(r.Key), vlen, r.Flags) != chunkClass {
		// A new record, in the class the item's flags call for, or
		// combining old and new values: the reserved chunk goes back once
		// it is copied from. Rare: appends of large values, and flags
		// whose 4 bytes cross a class boundary.
		if rr := sh.rec(pos); s.slabs.chained(rr) {
			r.Value = s.slabs.appendValue(nil, uint64(pos))
		} else {
			r.Value = rr.value()
		}
		res, cas := s.setLocked(sh, tag, &r)
		sh.freeChunkLocked(pos)
		return res, cas
	}
	sh.st.CmdSet++
	class := s.ItemClass(len(r.Key), vlen, r.Flags)
	sh.countSet(class)
	now64 := s.Now()
	now := clampTime(now64)
	p, res, done := s.plan(sh, tag, &r, now64, now)
	if done {
		sh.freeChunkLocked(pos)
		return res, 0
	}
	nr := sh.rec(pos)
	cas := sh.casOrNext(r.NewCAS)
	nr.writeHeader(len(r.Key), vlen, class, p.flags, p.exp, cas, now)
	nr.markCASChosen(r.NewCAS.chosen())
	nr.setBits(p.bits)
	sh.link(p.slot, tag, pos)
	sh.st.TotalItems++
	return Stored, s.casOf(cas)
}
