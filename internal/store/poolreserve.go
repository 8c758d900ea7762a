package store

import "sync/atomic"

// With a flash tier, memcached keeps a few pages in its global page pool
// for the small classes where item headers live: a watermark of
// slab_automove_freeratio (1 %) of the pages, at least two, which its
// extstore automover refills from the value classes and its flusher
// writes toward. Here the value classes (from ext_item_size's class up:
// the items that may go to flash) may not take the pool's last reserve
// pages; the classes below may. Without it a load of values several
// times -m took every page for the value classes, and the header class,
// left with its first page, evicted headers as flushes made new ones:
// each an item lost from flash (10,336 of 21,248 written in a 4 × -m
// load). The automover refills the reserve (automoveFlash).

// reserveRatio is memcached's slab_automove_freeratio default.
const reserveRatio = 0.01

// poolReserve is the reserve: the first class that leaves it (0: no
// reserve, no flash tier) and its size in pages.
type poolReserve struct {
	from  atomic.Int32
	pages atomic.Int32
}

// keepFor is how many pool pages class may not take.
func (r *poolReserve) keepFor(class int) int {
	if from := r.from.Load(); from > 0 && int32(class) >= from {
		return int(r.pages.Load())
	}
	return 0
}

// reservePages is memcached's watermark for a limit of limitPages pages.
func reservePages(limitPages int) int { return max(2, int(float64(limitPages)*reserveRatio)) }

// setReserve sizes the reserve for the flash tier's first class and the
// current limit; a store without flash keeps none.
func (s *Store) setReserve(minClass int) {
	if s.flash == nil {
		return
	}
	s.slabs.reserve.pages.Store(int32(reservePages(s.slabs.arena.limit())))
	s.slabs.reserve.from.Store(int32(minClass))
}

// reserveSource is the class that gives the pool a page when a flash
// tier's reserve runs short and memory is at its limit, as memcached's
// extstore automover does: of the value classes with more than two pages,
// the one whose oldest item is oldest. 0: none is due.
func (s *Store) reserveSource() int {
	r := &s.slabs.reserve
	from, pages := int(r.from.Load()), int(r.pages.Load())
	if from == 0 || !s.slabs.arena.exhaustedFor(pages-1) {
		return 0
	}
	src, oldest := 0, int64(-1)
	for _, c := range s.Classes() {
		if c.ID >= from && c.TotalPages > 2 && c.OldestAge > oldest {
			src, oldest = c.ID, c.OldestAge
		}
	}
	return src
}

// FlashMemoryPressure is memcached's extstore_memory_pressure, in %: the
// pages of the classes below ext_item_size (where headers live) over those
// pages, the pages of value classes with more than two (the ones its
// automover may take from) and the pool's. 100 would mean headers must be
// evicted. memcached's extstore automover computes it, so it stays 0
// without a flash tier or with slab_automove 0.
func (s *Store) FlashMemoryPressure() float64 {
	if s.flash == nil || s.automove.level.Load() == 0 {
		return 0
	}
	itemSize := int(s.flash.knobs.load().ItemSize)
	low, high := 0, 0
	for _, c := range s.Classes() {
		switch {
		case c.ChunkSize < itemSize:
			low += c.TotalPages
		case c.TotalPages > 2:
			high += c.TotalPages
		}
	}
	total := low + high + s.slabs.arena.poolPages()
	if total == 0 {
		return 0
	}
	return float64(low) / float64(total) * 100
}
