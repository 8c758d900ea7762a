package store

import "unsafe"

// Naming a record across lock releases.
//
// A large value is sent in pieces over several turns of its connection,
// and may not be held as a slice while its shard is unlocked: a delete,
// replacement or eviction gives its chunk back, and the next allocation in
// the class writes over it. So, as memcached pins an item being sent with
// a reference count, a ValueRef pins its record's chunk: the record may
// still be unlinked (a get then misses it, and its counters drop), but its
// chunk stays as it is until the last ValueRef on it is released
// (ReleaseRef), and only then goes back to its class. An eviction skips a
// pinned item, as memcached's skips an item in use. Pins are counted per
// shard in a map, as only values sent in pieces take them.

// ValueRef names the value of one record, as a reader found it, and pins
// it until ReleaseRef. The zero ValueRef names nothing.
type ValueRef struct {
	pos   int // the record's arena offset
	vlen  uint32
	voff  uint32 // the value's offset within the record
	shard uint32
	ok    bool
	whole bool // the value lies in one chunk (not a chain's): RefBytes
}

// Len is the value's length.
func (r ValueRef) Len() int { return int(r.vlen) }

// pin counts the ValueRefs on one chunk; orphan is set once the record
// was unlinked, so the last release gives the chunk back.
type pin struct {
	n      int32
	orphan bool
}

// refOf pins the live record at pos and returns a ValueRef for it.
func (sh *shard) refOf(pos int, r rec) ValueRef {
	if sh.pins == nil {
		sh.pins = make(map[int]pin)
	}
	p := sh.pins[pos]
	p.n++
	sh.pins[pos] = p
	return ValueRef{pos: pos, vlen: uint32(r.vlen()), voff: uint32(sh.slabs.valueOff(r)), shard: uint32(sh.id), ok: true,
		whole: !sh.slabs.chained(r)}
}

// RefBytes is the value ref names, in the store's own memory, when it lies
// in one piece (not a chained item's); nil otherwise. The pin keeps those
// bytes as they are until ReleaseRef, whatever happens to the item (no
// write goes to a pinned chunk: replacement, append and incr all take a
// new one), so an engine may hand them to the kernel to send without
// copying them and without the shard's lock. Read only.
func (s *Store) RefBytes(ref ValueRef) []byte {
	if !ref.ok || !ref.whole {
		return nil
	}
	start := ref.pos + int(ref.voff)
	return s.slabs.arena.mem[start : start+int(ref.vlen) : start+int(ref.vlen)]
}

// pinned reports whether a ValueRef holds the chunk at pos.
func (sh *shard) pinned(pos int) bool {
	_, ok := sh.pins[pos]
	return ok
}

// orphan marks the pinned chunk at pos as unlinked: its last release
// frees it.
func (sh *shard) orphan(pos int) {
	p := sh.pins[pos]
	p.orphan = true
	sh.pins[pos] = p
}

// CopyValue copies the value bytes [off, off+len(dst)) named by ref into
// dst. It returns false, copying nothing, for a range outside the value or
// a released or zero ref.
func (s *Store) CopyValue(ref ValueRef, off int, dst []byte) bool {
	if !ref.ok || off < 0 || off+len(dst) > int(ref.vlen) {
		return false
	}
	sh := &s.shards[ref.shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.pinned(ref.pos) {
		sh.st.RefsLost++
		return false
	}
	s.slabs.copyValue(uint64(ref.pos), off, dst)
	return true
}

// ReleaseRef ends ref's pin; the zero ValueRef is ignored. Every ref
// taken with RefOf or Item.Ref must be released once, or its chunk stays
// taken.
func (s *Store) ReleaseRef(ref ValueRef) {
	if !ref.ok {
		return
	}
	sh := &s.shards[ref.shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.unpin(ref.pos)
}

// unpin ends one pin on the chunk at pos, giving it back if it was the
// last and the record is unlinked.
func (sh *shard) unpin(pos int) {
	p, ok := sh.pins[pos]
	if !ok {
		return
	}
	if p.n--; p.n > 0 {
		sh.pins[pos] = p
		return
	}
	delete(sh.pins, pos)
	if p.orphan {
		sh.freeChunkLocked(pos)
	}
}

// freeChunkLocked gives the chunk at pos, in no queue and no index, back
// to its class.
func (sh *shard) freeChunkLocked(pos int) {
	c := &sh.slabs.classes[sh.rec(pos).class()]
	c.mu.Lock()
	sh.slabs.freeChunk(c, uint64(pos))
	c.mu.Unlock()
}

// Ref pins the item's value and returns a ValueRef for it.
func (it Item) Ref() ValueRef { return it.sh.refOf(it.pos, it.rec()) }

// RefOf pins and returns a ValueRef for value, which must be the slice a
// Get or GetAndTouch callback for key is handed, and must be called inside
// that callback (its shard is locked). Get itself takes no refs, so that
// the callbacks of small values, nearly all of them, pay nothing for them.
// A value that is not such a slice gets the zero ValueRef.
func (s *Store) RefOf(key, value []byte) ValueRef {
	sh, tag := s.shardFor(key)
	mem := s.slabs.arena.mem
	if len(value) == 0 || len(mem) == 0 {
		return ValueRef{}
	}
	if !inside(value, mem) {
		// A chained item's value, copied out for the callback: its
		// record is the key's (the callback holds its shard).
		if slot := sh.find(key, tag); slot >= 0 {
			pos := sh.posOf(slot)
			if r := sh.rec(pos); r.vlen() == len(value) && s.slabs.chained(r) {
				return sh.refOf(pos, r)
			}
		}
		return ValueRef{}
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(value))) - uintptr(unsafe.Pointer(unsafe.SliceData(mem))))
	pos := off - recHeader - len(key)
	if pos < 0 || off+len(value) > len(mem) {
		return ValueRef{}
	}
	r := sh.rec(pos)
	if r.vlen() != len(value) || r.klen() != len(key) {
		return ValueRef{}
	}
	return sh.refOf(pos, r)
}

// Pins reports how many chunks ValueRefs hold now (a diagnostic: 0 once
// every reply in pieces has been sent or its connection reset).
func (s *Store) Pins() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.pins)
		sh.mu.Unlock()
	}
	return n
}

// inside reports whether b lies within mem.
func inside(b, mem []byte) bool {
	p, m := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	return p >= m && p+uintptr(len(b)) <= m+uintptr(len(mem))
}
