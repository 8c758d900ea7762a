package store

// Size classes: memcached's chunk sizes (from 96 bytes growing by 1.25,
// 8-byte aligned, or what -n, -f and -o slab_sizes ask), which the slab
// allocator cuts its pages into (slab.go), and the per-shard counters of
// each class that `stats slabs` and `stats items` report.

const (
	defaultMinChunk = 48      // memcached's -n: key+value+flags room of the smallest class
	defaultFactor   = 1.25    // memcached's -f
	pageSize        = 1 << 20 // memcached's slab page: what the arena hands out
	// maxClasses is memcached's MAX_NUMBER_OF_SLAB_CLASSES-1: ids 1..63.
	maxClasses = 63
)

// sizeClasses returns the chunk size of each class id (index 0 is unused),
// as memcached's slabs_init builds them: memcached's header plus minChunk,
// growing by factor (the product truncated to whole bytes, then 8-byte
// aligned, so a factor too small to grow the size repeats it), until the
// unaligned size reaches chunkMax/factor or maxClasses-1 classes exist; the
// last class is chunkMax itself (memcached's slab_chunk_max), which an item
// too large for every class is counted in, as memcached counts a chunked
// item in its largest class. Given slabSizes (-o slab_sizes), the classes
// before the last are those sizes, 8-byte aligned, instead.
func sizeClasses(chunkMax, minChunk int, factor float64, slabSizes []int) []int {
	if minChunk <= 0 {
		minChunk = defaultMinChunk
	}
	if factor <= 1 {
		factor = defaultFactor
	}
	sizes := []int{0}
	if len(slabSizes) > 0 {
		for _, size := range slabSizes[:min(len(slabSizes), maxClasses-1)] {
			if size <= 0 {
				break
			}
			sizes = append(sizes, (size+7)&^7)
		}
		return append(sizes, chunkMax)
	}
	size := uint32(memcachedHeader + minChunk)
	for len(sizes) < maxClasses && float64(size) < float64(chunkMax)/factor {
		size = (size + 7) &^ 7
		sizes = append(sizes, int(size))
		size = uint32(float64(size) * factor)
	}
	return append(sizes, chunkMax)
}

// classTable maps record sizes to class ids: small sizes by a direct lookup
// (the common case on every store), large ones by binary search.
type classTable struct {
	sizes []int   // chunk size per class id; index 0 unused
	small []uint8 // class id per size/8 for sizes up to smallSizes
}

const smallSizes = 16 << 10

func newClassTable(chunkMax, minChunk int, factor float64, slabSizes []int) classTable {
	ct := classTable{sizes: sizeClasses(chunkMax, minChunk, factor, slabSizes)}
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
	items                                  uint64
	requested                              uint64 // memcached's ITEM_ntotal of the live items (mem_requested)
	evicted, evictedUnfetched              uint64
	evictedNonzero                         uint64 // evicted items that had an exptime
	reclaimed, expiredUnfetched            uint64
	crawlerReclaimed                       uint64 // reclaimed by the sweep (memcached's LRU crawler)
	crawlerChecked                         uint64 // items the sweep looked at (crawler_items_checked)
	outOfMemory                            uint64
	getHits, cmdSet, deleteHits            uint64
	incrHits, decrHits, casHits, casBadval uint64
	touchHits                              uint64
	temp                                   uint64 // live items in the TEMP LRU (templru.go)
	evictedActive                          uint64 // evicted items read since they entered COLD
	evictedTime                            uint32 // seconds the last evicted item had gone unread
	// Get hits by the queue the item was in (memcached's hits_to_*).
	hitsHot, hitsWarm, hitsCold, hitsTemp uint64
}

// countSet counts a store whose data arrived in class, the class of the
// item memcached allocates for that data (for an append, the appended
// bytes'), whatever the outcome: it counts set_cmds per class there, its
// cmd_set is their sum, and the allocation gives the class its first page,
// so `stats slabs` lists it even when nothing was stored (a failed add).
func (sh *shard) countSet(class int) {
	sh.cls[class].cmdSet++
}

// resetEvents zeroes what `stats reset` clears, keeping the live totals.
func (c *classCounters) resetEvents() {
	*c = classCounters{items: c.items, requested: c.requested, temp: c.temp}
}

// ClassSizes returns the chunk size of each class, ids 1..ClassCount in
// order, and the chunks a memcached slab page holds of it, as memcached's
// slabs_init prints them at -vv ("slab class   1: chunk size 96 perslab
// 10922").
func (s *Store) ClassSizes() (sizes, perPage []int) {
	for _, size := range s.classes.sizes[1:] {
		sizes = append(sizes, size)
		perPage = append(perPage, max(1, pageSize/size))
	}
	return sizes, perPage
}

// ClassCount reports the number of size classes (ids 1..ClassCount), the
// largest id memcached's slab commands accept.
func (s *Store) ClassCount() int { return len(s.classes.sizes) - 1 }

// ItemClass returns the slab class memcached would keep an item with these
// key and value lengths and flags in (as Item.Class does for a stored one),
// for log lines about items that are not at hand.
func (s *Store) ItemClass(keyLen, valueLen int, flags uint32) int {
	return s.classes.classOf((mcSize(keyLen, valueLen, flags, s.cfg.DisableCAS) + 7) &^ 7)
}
