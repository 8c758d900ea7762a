package store

// Size classes exist here only for reporting: records of every size share a
// shard's ring, but `stats slabs` and `stats items` group items the way
// memcached's slab classes would (chunk sizes from 96 bytes growing by 1.25,
// 8-byte aligned), so tools that read those stats see familiar numbers.

const (
	classBase   = 96
	classFactor = 1.25
	pageSize    = 1 << 20 // the "page" ClassStats counts in; memcached's slab page
)

// sizeClasses returns the chunk size of each class id (index 0 is unused);
// the last class holds the largest record an item of maxRecord bytes needs.
func sizeClasses(maxRecord int) []int {
	sizes := []int{0}
	size := classBase
	for size < maxRecord {
		sizes = append(sizes, size)
		next := (int(float64(size)*classFactor) + 7) &^ 7
		if next == size {
			next += 8
		}
		size = next
	}
	return append(sizes, (maxRecord+7)&^7)
}

// classTable maps record sizes to class ids: small sizes by a direct lookup
// (the common case on every store), large ones by binary search.
type classTable struct {
	sizes []int   // chunk size per class id; index 0 unused
	small []uint8 // class id per size/8 for sizes up to smallSizes
}

const smallSizes = 16 << 10

func newClassTable(maxRecord int) classTable {
	ct := classTable{sizes: sizeClasses(maxRecord)}
	ct.small = make([]uint8, smallSizes/8+1)
	for i := range ct.small {
		ct.small[i] = uint8(ct.search(i * 8))
	}
	return ct
}

// classOf returns the smallest class whose chunk holds size bytes (a multiple of 8).
func (ct *classTable) classOf(size int) int {
	if size <= smallSizes {
		return int(ct.small[size>>3])
	}
	return ct.search(size)
}

func (ct *classTable) search(size int) int {
	lo, hi := 1, len(ct.sizes)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if ct.sizes[mid] >= size {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// classCounters are one shard's totals for one size class.
type classCounters struct {
	items, bytes                           uint64
	evicted, evictedUnfetched              uint64
	reclaimed, expiredUnfetched            uint64
	outOfMemory                            uint64
	getHits, cmdSet, deleteHits            uint64
	incrHits, decrHits, casHits, casBadval uint64
	touchHits                              uint64
}

// resetEvents zeroes what `stats reset` clears, keeping the live totals.
func (c *classCounters) resetEvents() {
	*c = classCounters{items: c.items, bytes: c.bytes}
}
