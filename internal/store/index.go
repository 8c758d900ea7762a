//go:build logstore

package store

// index maps keys of one shard to record offsets. It is an open-addressing
// table with linear probing over two parallel arrays of uint32: a 32-bit tag
// (the high half of the key's xxhash, never 0; 0 marks an empty slot) and
// the record's ring offset divided by 8. The arrays hold no pointers, so the
// garbage collector never looks inside them however many items there are.
//
// An entry's home slot is tag & mask, so the table can be resized, and
// entries shifted back on deletion, from the tags alone without reading keys.
type index struct {
	tags  []uint32
	locs  []uint32
	mask  uint32
	count int
	// epoch changes whenever entries move or vanish, so a caller that found a
	// slot before allocating ring space knows whether the slot is still valid.
	epoch uint64
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
	return index{tags: make([]uint32, n), locs: make([]uint32, n), mask: uint32(n - 1)}
}

// tagOf derives an entry's tag from the key hash. The shard is chosen from the
// low bits of the hash, the tag from the high half, so they are independent.
func tagOf(h uint64) uint32 {
	t := uint32(h >> 32)
	if t == 0 {
		t = 1
	}
	return t
}

// findLoc returns the slot holding exactly (tag, loc), or -1.
func (ix *index) findLoc(tag, loc uint32) int {
	for i := tag & ix.mask; ; i = (i + 1) & ix.mask {
		t := ix.tags[i]
		if t == 0 {
			return -1
		}
		if t == tag && ix.locs[i] == loc {
			return int(i)
		}
	}
}

// insert adds an entry for a key known to be absent.
func (ix *index) insert(tag, loc uint32) {
	if (ix.count+1)*maxLoadDen > len(ix.tags)*maxLoadNum {
		ix.grow()
	}
	ix.place(tag, loc)
	ix.count++
}

func (ix *index) place(tag, loc uint32) {
	i := tag & ix.mask
	for ix.tags[i] != 0 {
		i = (i + 1) & ix.mask
	}
	ix.tags[i] = tag
	ix.locs[i] = loc
}

func (ix *index) grow() {
	oldTags, oldLocs := ix.tags, ix.locs
	n := len(oldTags) * 2
	ix.tags, ix.locs, ix.mask = make([]uint32, n), make([]uint32, n), uint32(n-1)
	for i, t := range oldTags {
		if t != 0 {
			ix.place(t, oldLocs[i])
		}
	}
	ix.epoch++
}

// remove deletes the entry in slot i, shifting later entries of the same
// probe run back so lookups need no tombstones.
func (ix *index) remove(i int) {
	hole := uint32(i)
	for j := (hole + 1) & ix.mask; ix.tags[j] != 0; j = (j + 1) & ix.mask {
		home := ix.tags[j] & ix.mask
		// The entry at j may fill the hole unless its home lies in (hole, j].
		if (j-home)&ix.mask >= (j-hole)&ix.mask {
			ix.tags[hole], ix.locs[hole] = ix.tags[j], ix.locs[j]
			hole = j
		}
	}
	ix.tags[hole], ix.locs[hole] = 0, 0
	ix.count--
	ix.epoch++
}

// clear drops every entry but keeps the table's size.
func (ix *index) clear() {
	clear(ix.tags)
	clear(ix.locs)
	ix.count = 0
	ix.epoch++
}

func (ix *index) bytes() int { return 8 * len(ix.tags) }
