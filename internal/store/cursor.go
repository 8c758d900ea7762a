package store

import "unsafe"

// Naming a record across lock releases.
//
// A large value is sent in pieces over several turns of its connection, and
// a large value being received is copied in as it arrives; neither may hold
// a slice into a ring while the shard is unlocked: the ring can be replaced
// and unmapped (SetMemoryLimit), emptied (flush_all), and the record moved
// (second chances and compaction copy it to the head) or dropped. What does
// not happen is a record's bytes changing in place: they stay as they were
// until the ring's head writes over them.
//
// So a shard counts, in vhead, every byte its head has passed (wrap jumps
// included: a wrap adds the bytes it skips), and in vtail the same for its
// tail. A record written when vhead was born has its byte k overwritten
// exactly when vhead passes born+len(ring)+k, and has been dropped from the
// ring (its space free for the head) once vtail passes born. gen names the
// ring itself. A ValueRef or a Reservation is then a few integers, checked
// under the shard lock at each use, and never keeps memory alive.
//
// The check errs on the safe side: flush_all and a restart of an empty ring
// count as wraps, so records of the lap before them count as overwritten.

// ValueRef names the value of one record, as a reader found it. It stays
// usable, through CopyValue, until the head overwrites the bytes being
// copied, even after the item was deleted, replaced or moved (it then
// yields the value as it was when read, as memcached's reference to the
// item would).
type ValueRef struct {
	born  uint64 // vhead when the record's first byte was written
	pos   int    // the record's offset in the ring
	vlen  uint32
	voff  uint32 // the value's offset within the record
	shard uint32
	gen   uint32
}

// Len is the value's length.
func (r ValueRef) Len() int { return int(r.vlen) }

// bornOf is the virtual position at which the live record at pos was
// written: in the head's lap, or the lap before for records between the
// tail and the wrap point.
func (sh *shard) bornOf(pos int) uint64 {
	lap := sh.vhead - uint64(sh.head)
	if sh.wrapped && pos >= sh.head {
		lap -= uint64(len(sh.buf))
	}
	return lap + uint64(pos)
}

// refOf returns a ValueRef for the live record at pos.
func (sh *shard) refOf(pos int, r rec) ValueRef {
	return ValueRef{
		born:  sh.bornOf(pos),
		pos:   pos,
		vlen:  uint32(r.vlen()),
		voff:  uint32(recHeader + r.klen()),
		shard: uint32(sh.id),
		gen:   sh.gen,
	}
}

// intactFrom reports whether the record named by (born, gen) still holds
// its own bytes from record offset k on.
func (sh *shard) intactFrom(born uint64, gen uint32, k int) bool {
	return gen == sh.gen && sh.vhead <= born+uint64(len(sh.buf))+uint64(k)
}

// CopyValue copies the value bytes [off, off+len(dst)) named by ref into
// dst. It returns false, copying nothing, when those bytes were
// overwritten (or the ring replaced) since ref was taken.
func (s *Store) CopyValue(ref ValueRef, off int, dst []byte) bool {
	if off < 0 || off+len(dst) > int(ref.vlen) {
		return false
	}
	sh := &s.shards[ref.shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	k := int(ref.voff) + off
	if !sh.intactFrom(ref.born, ref.gen, k) {
		sh.st.RefsLost++
		return false
	}
	copy(dst, sh.buf[ref.pos+k:])
	return true
}

// Ref returns a ValueRef for the item's value.
func (it Item) Ref() ValueRef { return it.sh.refOf(it.pos, it.rec()) }

// RefOf returns a ValueRef for value, which must be the slice a Get or
// GetAndTouch callback for key is handed, and must be called inside that
// callback (its shard is locked). Get itself leaves refs out, so that the
// callbacks of small values, nearly all of them, pay nothing for them.
// A value that is not such a slice gets a ref CopyValue refuses.
func (s *Store) RefOf(key, value []byte) ValueRef {
	sh, _ := s.shardFor(key)
	if len(value) == 0 || len(sh.buf) == 0 {
		return ValueRef{}
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(value))) - uintptr(unsafe.Pointer(unsafe.SliceData(sh.buf))))
	pos := off - recHeader - len(key)
	if pos < 0 || off+len(value) > len(sh.buf) {
		return ValueRef{}
	}
	r := sh.rec(pos)
	if r.vlen() != len(value) || r.klen() != len(key) {
		return ValueRef{}
	}
	return sh.refOf(pos, r)
}
