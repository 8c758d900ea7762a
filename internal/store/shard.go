package store

import (
	"math/bits"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// shard is one independently locked part of the store: a ring of records,
// the index over it, and the counters for what happened in it.
type shard struct {
	mu sync.Mutex

	id      uint64 // shard number, folded into CAS uniques to keep them unique store-wide
	idBits  uint
	noEvict bool // -M
	// plainLRU: one read protects an item (Config.PlainLRU, markRead).
	plainLRU bool
	hooks    *storeHooks
	buf      []byte
	head     int  // where the next record goes
	tail     int  // the oldest record
	end      int  // while wrapped: where the records before the wrap stop
	wrapped  bool // records occupy [tail, end) and [0, head); otherwise [tail, head)
	touched  int  // high-water mark of ring bytes ever written
	live     int  // bytes of records still in the index
	// vhead and vtail are the head's and tail's virtual positions: every
	// byte either has passed, wrap jumps included, so that a ValueRef or a
	// Reservation can tell without holding anything whether the record it
	// names was overwritten or dropped (cursor.go). gen changes when buf is
	// replaced (SetMemoryLimit).
	vhead, vtail uint64
	gen          uint32
	idx          index
	seq          uint64 // last CAS sequence handed out in this shard
	expiring     int    // live records with a nonzero exptime (the reclaimer skips shards without any)

	// flush_all is lazy, as in memcached: flushed records stay where they
	// are, invisible, until a lookup meets them (get_flushed), the tail
	// passes them (reclaimed) or the reclaimer sweeps them. flushLive is
	// memcached's oldest_live once in force: records stored at or before it
	// are invalid. flushCAS is its oldest_cas: records with a CAS below it
	// are invalid too, which makes a flush exact within its second when CAS
	// is on. flushPending is a delayed flush's oldest_live, in force once
	// it is <= now. 0 = none, for each. flush.go.
	flushLive     uint32
	flushPending  uint32
	flushCAS      uint64
	flushSweepAt  uint32    // when the reclaimer sweeps the last flush's records; 0 = no sweep due
	flushSweeping bool      // that sweep has started (at slot 0)
	noCAS         bool      // -C: memcached's item sizes have no CAS field
	sizes         *sizeHist // `stats sizes` while on (sizes.go)
	sizesCASMin   uint64    // items with an older CAS are not in sizes
	cursor        uint32

	st      Stats
	cls     []classCounters
	scratch []byte // holds an old value while append/prepend allocate

	_ [64]byte // keep neighbouring shards' locks off this cache line
}

func (sh *shard) rec(pos int) rec { return rec(sh.buf[pos:]) }

// largeScratch holds the scratch buffers of big appends between uses, for
// every shard: a sync.Pool, so that a run of large appends into a full ring
// reuses one array instead of dropping one per append (each a GC cycle's
// worth of garbage with the small Go heap), while the collector still frees
// them once such appends stop.
var largeScratch sync.Pool // of *[]byte

// scratchFor returns sh.scratch with room for n bytes, from largeScratch
// when it is too small for them.
func (sh *shard) scratchFor(n int) []byte {
	if cap(sh.scratch) < n {
		if p, ok := largeScratch.Get().(*[]byte); ok && cap(*p) >= n {
			sh.scratch = *p
		} else {
			if ok {
				largeScratch.Put(p)
			}
			// A power of two: a value grown by appends fits again next time.
			sh.scratch = make([]byte, 0, 1<<bits.Len(uint(n-1)))
		}
	}
	return sh.scratch[:0]
}

// dropLargeScratch lets a big append's copy go, so that memory outside the
// rings does not grow to a maximum-size item per shard: back to
// largeScratch, which the collector empties.
func (sh *shard) dropLargeScratch() {
	if cap(sh.scratch) > 64<<10 {
		b := sh.scratch[:0]
		largeScratch.Put(&b)
		sh.scratch = nil
	}
}

// find returns the index slot of key, or -1.
func (sh *shard) find(key []byte, tag uint32) int {
	ix := &sh.idx
	for i := tag & ix.mask; ; i = (i + 1) & ix.mask {
		e := ix.slots[i]
		if e == 0 {
			return -1
		}
		if entryTag(e) == tag {
			pos := int(entryLoc(e)) << 3
			if int(sh.buf[pos+offKlen]) == len(key) &&
				string(sh.buf[pos+recHeader:pos+recHeader+len(key)]) == string(key) {
				return int(i)
			}
		}
	}
}

func (sh *shard) posOf(slot int) int { return int(sh.idx.loc(slot)) << 3 }

// flushed reports whether a flush_all has invalidated r, by memcached's
// rule: stored at or before oldest_live, or given a CAS before oldest_cas.
func (sh *shard) flushed(r rec, now uint32) bool {
	if sh.flushLive|sh.flushPending == 0 {
		return false // the common case: one test on the lookup path
	}
	st := r.stored()
	if p := sh.flushPending; p != 0 && p <= now && st <= p {
		return true
	}
	if sh.flushLive == 0 {
		return false
	}
	c := r.cas()
	return st <= sh.flushLive || c != 0 && c < sh.flushCAS
}

// lookup returns the slot of a valid item for key, or -1. An expired or
// flushed item found on the way is unlinked and counted as a get would
// count it (memcached counts these on every lookup, stores included).
func (sh *shard) lookup(key []byte, tag uint32, now uint32) int {
	slot := sh.find(key, tag)
	if slot < 0 {
		return -1
	}
	r := sh.rec(sh.posOf(slot))
	switch {
	case sh.flushed(r, now): // memcached tests this before expiry
		sh.st.GetFlushed++
	case r.expired(now):
		sh.st.GetExpired++
	default:
		return slot
	}
	sh.unlink(slot)
	return -1
}

// unlink removes the item in slot from the index; its bytes become dead
// space that the ring tail will pass over.
func (sh *shard) unlink(slot int) {
	pos := sh.posOf(slot)
	r := sh.rec(pos)
	sz := r.size()
	r.setBits(recDead)
	sh.live -= sz
	c := &sh.cls[r.class()]
	c.items--
	c.bytes -= uint64(sz)
	c.requested -= uint64(r.mcSize(sh.noCAS))
	if r.bits()&recTemp != 0 {
		c.temp--
	}
	if r.exptime() != 0 {
		sh.expiring--
	}
	sh.sizesRemove(r)
	sh.idx.remove(slot)
}

// link records a freshly written record at pos: as a new entry, or in place
// of the item in slot (whose record dies).
func (sh *shard) link(slot int, tag uint32, pos int) {
	r := sh.rec(pos)
	sz := r.size()
	sh.live += sz
	c := &sh.cls[r.class()]
	c.items++
	c.held = true
	c.bytes += uint64(sz)
	c.requested += uint64(r.mcSize(sh.noCAS))
	if sh.temporary(r) {
		r.setBits(recTemp)
		c.temp++
	} else {
		r.clearBits(recTemp)
	}
	if r.exptime() != 0 {
		sh.expiring++
	}
	sh.sizesAdd(r)
	if slot < 0 {
		sh.idx.insert(tag, uint32(pos>>3))
		return
	}
	old := sh.rec(sh.posOf(slot))
	osz := old.size()
	old.setBits(recDead)
	sh.live -= osz
	oc := &sh.cls[old.class()]
	oc.items--
	oc.bytes -= uint64(osz)
	oc.requested -= uint64(old.mcSize(sh.noCAS))
	if old.bits()&recTemp != 0 {
		oc.temp--
	}
	if old.exptime() != 0 {
		sh.expiring--
	}
	sh.sizesRemove(old)
	sh.idx.setLoc(slot, uint32(pos>>3))
}

// slotOfRecord finds the index slot pointing at the live record at pos.
func (sh *shard) slotOfRecord(pos int) int {
	r := sh.rec(pos)
	return sh.idx.findLoc(tagOf(xxhash.Sum64(r.key())), uint32(pos>>3))
}

// casOrNext returns the client's explicit CAS (meta E) when it gave one,
// else the next unique.
func (sh *shard) casOrNext(explicit NewCAS) uint64 {
	if explicit.Set {
		return explicit.Value
	}
	return sh.nextCAS()
}

// nextCAS hands out a CAS unique that no other shard can produce.
func (sh *shard) nextCAS() uint64 {
	sh.seq++
	return sh.seq<<sh.idBits | sh.id
}

// An allocation moves at most maxRelocations live items from the tail to the
// head (second chances and compaction) before it evicts regardless; that
// bounds the work one store does under the shard lock.
const maxRelocations = 64

// While live items fill less than compactBelow of a ring, an unread item at
// the tail is moved rather than evicted: the ring is mostly dead records from
// overwrites and deletes, and evicting would throw away memory that is not
// full. Above it, moving would copy more bytes than it frees.
const compactBelowNum, compactBelowDen = 3, 4

// Under -M a ring is full when live items would pass 15/16 of it: the slack
// keeps the copying that compaction does per store bounded (at most ~15
// bytes moved per byte freed, on average).
const noEvictFillNum, noEvictFillDen = 15, 16

// alloc reserves n bytes (a multiple of 8, at most len(buf)) at the ring head,
// reclaiming dead, expired and flushed records from the tail and, when that
// is not enough, evicting the oldest items (or under -M relocating them,
// failing with OutOfMemory when live items fill the ring).
func (sh *shard) alloc(n int, now uint32) (int, Result) {
	if n > len(sh.buf) {
		return 0, OutOfMemory // (New sizes rings so that the first cannot happen)
	}
	if sh.noEvict && sh.noEvictFull(n, now) {
		return 0, OutOfMemory
	}
	chances, moved := 0, 0
	for {
		if sh.headRoom(n) {
			return sh.take(n), Stored
		}
		if !sh.wrapped {
			if sh.head == sh.tail { // empty: start over at 0 rather than wrap
				sh.restart()
				continue
			}
			sh.end, sh.wrapped = sh.head, true
			sh.jumpHead()
			continue
		}
		if !sh.freeTail(now, &chances, &moved) {
			return 0, OutOfMemory
		}
	}
}

// overFill reports whether n more live bytes pass what -M lets a ring hold.
func (sh *shard) overFill(n int) bool {
	return (sh.live+n)*noEvictFillDen > len(sh.buf)*noEvictFillNum
}

// noEvictFull reports whether -M must refuse n more live bytes. Flushed
// records still count as live until met: they are all unlinked before a
// refusal, as memcached reclaims flushed items before it fails a store.
// Index entries may move (idx.epoch changes).
func (sh *shard) noEvictFull(n int, now uint32) bool {
	if !sh.overFill(n) {
		return false
	}
	if sh.flushSweepAt != 0 {
		sh.cursor, sh.flushSweepAt, sh.flushSweeping = 0, now, true
		for done := false; !done; {
			done, _ = sh.sweep(now, len(sh.idx.slots)+1)
		}
	}
	return sh.overFill(n)
}

// fitsAsIs reports whether alloc(n) will take free space at the head
// without reclaiming, evicting, moving or restarting anything, so that the
// records already in the ring keep their place and bytes.
func (sh *shard) fitsAsIs(n int) bool {
	if sh.noEvict && sh.overFill(n) {
		return false // (alloc may then sweep flushed records)
	}
	return sh.headRoom(n)
}

// headRoom reports whether n bytes are free at the head as things stand:
// before the end of an unwrapped ring, or between head and tail. alloc
// takes them then, and fitsAsIs foresees that it will.
func (sh *shard) headRoom(n int) bool {
	if sh.wrapped {
		return sh.tail-sh.head >= n
	}
	return sh.head+n <= len(sh.buf)
}

func (sh *shard) take(n int) int {
	pos := sh.head
	sh.head += n
	sh.vhead += uint64(n)
	if sh.head > sh.touched {
		sh.touched = sh.head
	}
	return pos
}

// freeTail advances the tail past one record, dropping it, evicting it or
// moving it to the head. It returns false when nothing may be evicted: -M,
// or a ring full of temporary items (templru.go).
func (sh *shard) freeTail(now uint32, chances, moved *int) bool {
	pos := sh.tail
	r := sh.rec(pos)
	sz := r.size()
	if r.bits()&recDead == 0 {
		slot := sh.slotOfRecord(pos)
		c := &sh.cls[r.class()]
		switch {
		case r.expired(now) || sh.flushed(r, now):
			sh.st.Reclaimed++
			c.reclaimed++
			if r.bits()&recFetched == 0 {
				sh.st.ExpiredUnfetched++
				c.expiredUnfetched++
			}
			sh.unlink(slot)
		case sh.noEvict:
			// Compact instead: the live record moves to the head. The caller
			// checked that live bytes leave room, so a few passes suffice;
			// the bound only guards against a bookkeeping bug spinning forever.
			if *moved > 3*len(sh.buf) {
				return false
			}
			*moved += sz
			sh.relocate(slot, pos, sz)
			return true
		case r.bits()&recTemp != 0:
			// memcached's TEMP LRU is never evicted (templru.go). Having
			// moved a whole ring's worth, the ring holds nothing else.
			if *moved >= len(sh.buf) {
				return false
			}
			*moved += sz
			sh.relocate(slot, pos, sz)
			return true
		case *chances < maxRelocations && (r.bits()&recReferenced != 0 ||
			sh.live*compactBelowDen < len(sh.buf)*compactBelowNum):
			*chances++
			r.clearBits(recReferenced)
			sh.relocate(slot, pos, sz)
			return true
		default:
			sh.countEviction(r, c)
			sh.unlink(slot)
		}
	}
	sh.advanceTail(sz)
	return true
}

// markRead marks r as read, as memcached's do_item_bump: the first read of
// an item only marks it fetched, a later one makes it active (referenced),
// which is what earns it a second chance at the ring's tail; after that
// one read keeps it active, as fetched stays. So a key read once is evicted
// like one never read, as in memcached's segmented LRU. Without it
// (plainLRU) memcached moves an item up on every read: one read is enough.
func (sh *shard) markRead(r rec) {
	if sh.plainLRU || r.bits()&recFetched != 0 {
		r.setBits(recFetched | recReferenced)
		return
	}
	r.setBits(recFetched)
}

// countEviction reports the eviction of r to the hook and counts it in the
// shard's and its class's statistics (c is r's class).
func (sh *shard) countEviction(r rec, c *classCounters) {
	sh.noteEviction(r)
	sh.st.Evictions++
	c.evicted++
	if r.exptime() != 0 {
		c.evictedNonzero++
	}
	if r.bits()&recFetched == 0 {
		sh.st.EvictedUnfetched++
		c.evictedUnfetched++
	}
	if r.bits()&recReferenced != 0 {
		sh.st.EvictedActive++
	}
}

// relocate copies the live record at the tail to the head. In the wrapped
// state the free gap [head, tail) sits right before it, so the copy keeps
// the gap's size and only moves it along.
func (sh *shard) relocate(slot, pos, sz int) {
	copy(sh.buf[sh.head:sh.head+sz], sh.buf[pos:pos+sz])
	sh.idx.setLoc(slot, uint32(sh.head>>3))
	sh.idx.epoch++
	sh.head += sz
	sh.vhead += uint64(sz)
	sh.advanceTail(sz)
}

func (sh *shard) advanceTail(sz int) {
	sh.tail += sz
	sh.vtail += uint64(sz)
	if sh.wrapped && sh.tail == sh.end {
		sh.vtail += uint64(len(sh.buf) - sh.end)
		sh.tail, sh.end, sh.wrapped = 0, 0, false
	}
}

// jumpHead moves the head to the ring's start, counting the bytes it skips
// as passed: the virtual head then lies a whole ring ahead of every byte
// of the lap it leaves (cursor.go).
func (sh *shard) jumpHead() {
	sh.vhead += uint64(len(sh.buf) - sh.head)
	sh.head = 0
}

// restart empties the ring's bookkeeping and starts it over at 0, as a
// wrap: records the head has not overwritten keep their bytes, but no
// cursor trusts them any more (the conservative side of the rule).
func (sh *shard) restart() {
	sh.jumpHead()
	sh.tail, sh.end, sh.wrapped = 0, 0, false
	sh.vtail = sh.vhead
}

// forEachLive calls fn with the offset of every live record, oldest first.
func (sh *shard) forEachLive(fn func(pos int)) {
	sh.forEachLiveUntil(func(pos int) bool { fn(pos); return true })
}

// forEachLiveUntil is forEachLive stopping as soon as fn returns false.
func (sh *shard) forEachLiveUntil(fn func(pos int) bool) {
	sh.forEachRecordUntil(func(pos int, dead bool) bool { return dead || fn(pos) })
}

// forEachRecordUntil calls fn with the offset of every record, dead ones
// too, oldest first, until fn returns false. A walk that must stay short
// whatever the ring holds (the tail of a ring that has not wrapped can be
// millions of overwritten, dead records) bounds itself with it.
func (sh *shard) forEachRecordUntil(fn func(pos int, dead bool) bool) {
	walk := func(from, to int) bool {
		for pos := from; pos < to; {
			r := sh.rec(pos)
			if !fn(pos, r.bits()&recDead != 0) {
				return false
			}
			pos += r.size()
		}
		return true
	}
	if sh.wrapped {
		if walk(sh.tail, sh.end) {
			walk(0, sh.head)
		}
	} else {
		walk(sh.tail, sh.head)
	}
}
