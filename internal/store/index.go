package store

import (
	"sync/atomic"
	"unsafe"
)

// index maps keys of one shard to record offsets. It is an open-addressing
// table with linear probing over one []uint64: each entry holds a 28-bit tag
// (the top bits of the key's xxhash, never 0) in its top bits and the
// record's arena offset divided by 8 in its low 36 bits (512 GiB of
// arena); 0 marks an empty slot.
// The table holds no pointers, so the garbage collector never looks inside
// it however many items there are, and a probe touches one cache line for
// both tag and offset.
//
// An entry's home slot is tag & mask, so the table can be resized, and
// entries shifted back on deletion, from the tags alone without reading keys.
type index struct {
	slots []uint64
	mask  uint32
	count int
	// epoch changes whenever entries move or vanish, so a caller that found a
	// slot before allocating (which may evict) knows whether it is still valid.
	epoch uint64
	// published is slots as a lock-free reader may see it: set whenever
	// slots is replaced (grow), so Store.Prefetch can find a table without
	// the shard lock. An old table stays allocated while a reader holds it.
	published atomic.Pointer[[]uint64]
}

const (
	minIndexSlots = 1024
	maxLoadNum    = 3 // grow when count exceeds 3/4 of the slots
	maxLoadDen    = 4
)

func newIndex(slots int) index {
	n := minIndexSlots
	for n < slots {
		n <<= 1
	}
	return index{slots: makeSlots(n), mask: uint32(n - 1)}
}

// publish makes the current table the one lock-free readers find.
func (ix *index) publish() {
	slots := ix.slots
	ix.published.Store(&slots)
}

func makeSlots(n int) []uint64 {
	slots := make([]uint64, n)
	adviseHugePages(unsafe.Slice((*byte)(unsafe.Pointer(&slots[0])), 8*n))
	return slots
}

// tagOf derives an entry's tag from the key hash. The shard is chosen from the
// low bits of the hash, the tag from the high half, so they are independent.
func tagOf(h uint64) uint32 {
	t := uint32(h >> (64 - tagBits))
	if t == 0 {
		t = 1
	}
	return t
}

// An entry's split between tag and location.
const (
	tagBits = 28
	locBits = 64 - tagBits
	locMask = 1<<locBits - 1
)

func entry(tag uint32, loc uint64) uint64 { return uint64(tag)<<locBits | loc }
func entryTag(e uint64) uint32            { return uint32(e >> locBits) }
func entryLoc(e uint64) uint64            { return e & locMask }

func (ix *index) loc(slot int) uint64 { return entryLoc(ix.slots[slot]) }

func (ix *index) setLoc(slot int, loc uint64) {
	ix.slots[slot] = entry(entryTag(ix.slots[slot]), loc)
}

// findLoc returns the slot holding exactly (tag, loc), or -1.
func (ix *index) findLoc(tag uint32, loc uint64) int {
	want := entry(tag, loc)
	for i := tag & ix.mask; ; i = (i + 1) & ix.mask {
		e := ix.slots[i]
		if e == 0 {
			return -1
		}
		if e == want {
			return int(i)
		}
	}
}

// insert adds an entry for a key known to be absent.
func (ix *index) insert(tag uint32, loc uint64) {
	if (ix.count+1)*maxLoadDen > len(ix.slots)*maxLoadNum {
		ix.grow()
	}
	ix.place(entry(tag, loc))
	ix.count++
}

func (ix *index) place(e uint64) {
	i := entryTag(e) & ix.mask
	for ix.slots[i] != 0 {
		i = (i + 1) & ix.mask
	}
	ix.slots[i] = e
}

func (ix *index) grow() {
	old := ix.slots
	ix.slots = makeSlots(2 * len(old))
	ix.mask = uint32(len(ix.slots) - 1)
	for _, e := range old {
		if e != 0 {
			ix.place(e)
		}
	}
	ix.publish()
	ix.epoch++
}

// remove deletes the entry in slot i, shifting later entries of the same
// probe run back so lookups need no tombstones.
func (ix *index) remove(i int) {
	hole := uint32(i)
	for j := (hole + 1) & ix.mask; ix.slots[j] != 0; j = (j + 1) & ix.mask {
		home := entryTag(ix.slots[j]) & ix.mask
		// The entry at j may fill the hole unless its home lies in (hole, j].
		if (j-home)&ix.mask >= (j-hole)&ix.mask {
			ix.slots[hole] = ix.slots[j]
			hole = j
		}
	}
	ix.slots[hole] = 0
	ix.count--
	ix.epoch++
}

// clear drops every entry but keeps the table's size.
func (ix *index) clear() {
	clear(ix.slots)
	ix.count = 0
	ix.epoch++
}

func (ix *index) bytes() int { return 8 * len(ix.slots) }
