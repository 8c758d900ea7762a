package store

import "sync/atomic"

// memcached's item size histogram (`stats sizes`): how many linked items
// have each item size, in 32-byte buckets of memcached's own size for the
// item (Item.Size, its ITEM_ntotal). It is off unless Config.TrackSizes
// (-o track_sizes) or EnableSizes (`stats sizes_enable`) turns it on, and
// it costs nothing per store while off.
//
// As in memcached, tracking turned on at run time counts only the items
// stored from then on: an item whose CAS unique is older than the moment
// of enabling is neither added nor removed. That is why it needs CAS
// uniques (memcached refuses with -C), and why an item whose CAS changes
// in place (incr/decr, meta's invalidate) is taken out and put back.

// sizesBucket is the histogram's granularity, memcached's.
const sizesBucket = 32

// sizeHist is the histogram: one counter per bucket up to the largest item
// (MaxItemSize/32+1 of them, 4 bytes each, allocated while tracking is on:
// 128 KiB for -I 1m), shared by every shard.
type sizeHist struct {
	counts []atomic.Int32
}

func newSizeHist(maxItemSize int) *sizeHist {
	return &sizeHist{counts: make([]atomic.Int32, maxItemSize/sizesBucket+1)}
}

// bucketOf is the bucket of an item of memcached size n (rounded up).
func bucketOf(n int) int { return (n + sizesBucket - 1) / sizesBucket }

// sizesAdd counts r if tracking is on and r is recent enough. Under sh.mu.
func (sh *shard) sizesAdd(r rec) { sh.sizesCount(r, 1) }

// sizesRemove uncounts r, as sizesAdd counted it. Under sh.mu.
func (sh *shard) sizesRemove(r rec) { sh.sizesCount(r, -1) }

func (sh *shard) sizesCount(r rec, d int32) {
	h := sh.sizes
	if h == nil || r.cas() < sh.sizesCASMin {
		return
	}
	if b := bucketOf(r.mcSize(sh.noCAS)); b < len(h.counts) {
		h.counts[b].Add(d)
	}
}

// EnableSizes turns the histogram on (`stats sizes_enable`), counting the
// items stored from now on; on already leaves it as it is. false: CAS is
// disabled (-C), which memcached's run-time tracking needs.
func (s *Store) EnableSizes() bool {
	if s.cfg.DisableCAS {
		return false
	}
	s.enableSizes(false)
	return true
}

// enableSizes installs a histogram in every shard unless one is there;
// fromStart counts every item (-o track_sizes), else only those whose CAS
// comes after this call.
func (s *Store) enableSizes(fromStart bool) {
	s.sizesMu.Lock()
	defer s.sizesMu.Unlock()
	if s.sizes.Load() != nil {
		return
	}
	h := newSizeHist(s.cfg.MaxItemSize)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.sizes, sh.sizesCASMin = h, 0
		if !fromStart {
			sh.sizesCASMin = (sh.seq+1)<<sh.idBits | sh.id // the next CAS this shard hands out
		}
		sh.mu.Unlock()
	}
	s.sizes.Store(h)
}

// DisableSizes turns the histogram off and forgets it (`stats sizes_disable`).
func (s *Store) DisableSizes() {
	s.sizesMu.Lock()
	defer s.sizesMu.Unlock()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.sizes = nil
		sh.mu.Unlock()
	}
	s.sizes.Store(nil)
}

// Sizes calls fn for every nonempty bucket, smallest first, with the
// bucket's size (a multiple of 32: items of up to that many bytes and more
// than the previous bucket's) and its item count; false if tracking is off.
func (s *Store) Sizes(fn func(size int, items int32)) bool {
	h := s.sizes.Load()
	if h == nil {
		return false
	}
	for b := range h.counts {
		if n := h.counts[b].Load(); n != 0 {
			fn(b*sizesBucket, n)
		}
	}
	return true
}

// SizesTracked reports whether the histogram is on (stats settings'
// track_sizes).
func (s *Store) SizesTracked() bool { return s.sizes.Load() != nil }
