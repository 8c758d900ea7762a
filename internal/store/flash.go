package store

import (
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/gocached/gocached/internal/extstore"
)

// Flash items (memcached's extstore, -o ext_path): the background loop
// writes the values of cold items to an extstore.Engine and swaps each
// item's chunk for a small header record in RAM that keeps the item's
// header, its key and the Location of its value (flashLocSize bytes where
// the value would start). The header keeps the real value length, so
// stats, sizes and meta's s flag see the item as it was.
//
// A header is marked by recFlash, the top bit of its class byte: the state
// bits byte is full (recChunk takes its last bit), and the queue byte is
// rewritten by every queue move and spends all its bits on the free, none
// and chunk markers; the class byte needs six bits (at most 63 classes)
// and is written only when a record is made, so the mark stays with the
// header until its chunk is freed.

// FlashConfig is memcached's extstore for the store (-o ext_path and the
// ext_* options that concern items).
type FlashConfig struct {
	Engine      *extstore.Engine // opened by the caller; the store does not Close it
	Policy      extstore.Policy  // ext_compact_under, ext_drop_under, ext_max_frag, ext_drop_unread
	ItemSize    int              // ext_item_size: values at least this long may go to flash (memcached default 512)
	ItemAge     uint32           // ext_item_age seconds (memcached default UINT_MAX: only memory pressure flushes)
	LowTTL      uint32           // ext_low_ttl: items with less TTL left go to the lowttl bucket (default 0)
	RecacheRate uint32           // ext_recache_rate (default 2000)
	MaxSleep    time.Duration    // ext_max_sleep (default 1 s): the flusher's longest idle wait
}

// recFlash marks a flash item's header record (in the class byte).
const recFlash = 1 << 7

// flashLocSize is the bytes of a Location in a header record: page and
// version in one word (versions count page allocations: 48 bits last),
// then offset and length.
const flashLocSize = 16

func (r rec) flash() bool { return r[offClass]&recFlash != 0 }

func (r rec) flashLoc() extstore.Location {
	b := r[recHeader+r.klen():]
	w := le.Uint64(b)
	return extstore.Location{Page: uint16(w), Version: w >> 16, Offset: le.Uint32(b[8:]), Len: le.Uint32(b[12:])}
}

func (r rec) setFlashLoc(l extstore.Location) {
	b := r[recHeader+r.klen():]
	le.PutUint64(b, l.Version<<16|uint64(l.Page))
	le.PutUint32(b[8:], l.Offset)
	le.PutUint32(b[12:], l.Len)
}

// flashState is the store's extstore side; nil without one.
type flashState struct {
	cfg   FlashConfig // the engine; the knobs' start values
	knobs flashKnobs  // the ext_* settings as they are now
	// events is the sysevents hook (flashevents.go), nil while unset.
	events atomic.Pointer[func(line []byte) bool]
	buf    []byte // a chained value copied out for its write (background loop only)

	// The worker-thread counters memcached prints in stats.
	getExtstore, getAborted, missFromExtstore, badcrcFromExtstore, recacheFromExtstore atomic.Uint64
	getOOM                                                                             atomic.Uint64
	recacheCounter                                                                     atomic.Uint64

	// The compactor (compact.go): kicked by the background loop, done
	// closed when it has stopped.
	compactKick                                 chan struct{}
	compactDone                                 chan struct{}
	compactRescues, compactSkipped, compactLost atomic.Uint64
	compactRescCold, compactRescOld             atomic.Uint64
	compactRounds                               atomic.Uint64 // kicks taken, for tests of the idle cadence
}

// FlashStats are memcached's per-thread extstore counters, summed.
type FlashStats struct {
	GetExtstore         uint64 // reads of flash values started
	GetAbortedExtstore  uint64 // reads whose reply was dropped before they were done
	GetOOMExtstore      uint64 // reads not started for want of memory for the value (flashroom.go)
	MissFromExtstore    uint64 // reads that found no value (stale page, bad record, I/O error)
	BadcrcFromExtstore  uint64 // of those, records whose checksum or length was wrong
	RecacheFromExtstore uint64 // flash items read back into RAM (ext_recache_rate)
	// The compactor's, memcached's extstore_compact_*: records written
	// again, left behind as unread, and lost for want of a buffer.
	CompactRescues, CompactSkipped, CompactLost uint64
	CompactRescCold, CompactRescOld             uint64 // rescues into coldcompact and old
}

// FlashStats returns the extstore counters; zero without extstore.
func (s *Store) FlashStats() FlashStats {
	f := s.flash
	if f == nil {
		return FlashStats{}
	}
	return FlashStats{
		GetExtstore:         f.getExtstore.Load(),
		GetAbortedExtstore:  f.getAborted.Load(),
		GetOOMExtstore:      f.getOOM.Load(),
		MissFromExtstore:    f.missFromExtstore.Load(),
		BadcrcFromExtstore:  f.badcrcFromExtstore.Load(),
		RecacheFromExtstore: f.recacheFromExtstore.Load(),
		CompactRescues:      f.compactRescues.Load(),
		CompactSkipped:      f.compactSkipped.Load(),
		CompactLost:         f.compactLost.Load(),
		CompactRescCold:     f.compactRescCold.Load(),
		CompactRescOld:      f.compactRescOld.Load(),
	}
}

// Flash reports the store's extstore configuration, nil without one: the
// engine and the knobs as they are now (a copy).
func (s *Store) Flash() *FlashConfig {
	if s.flash == nil {
		return nil
	}
	c := s.flash.cfg
	k := s.flash.knobs.load()
	c.ItemSize, c.ItemAge, c.LowTTL, c.RecacheRate = int(k.ItemSize), k.ItemAge, k.LowTTL, k.RecacheRate
	c.MaxSleep, c.Policy = time.Duration(k.MaxSleep)*time.Microsecond, k.Policy
	return &c
}

// initFlash sets up cfg.Flash, if any, once the classes exist.
func (s *Store) initFlash() {
	fc := s.cfg.Flash
	if fc == nil || fc.Engine == nil {
		return
	}
	f := &flashState{cfg: *fc}
	if f.cfg.ItemSize <= 0 {
		f.cfg.ItemSize = 512
	}
	if f.cfg.MaxSleep <= 0 {
		f.cfg.MaxSleep = time.Second
	}
	f.compactKick = make(chan struct{}, 1)
	f.compactDone = make(chan struct{})
	s.flash = f
	s.setKnobs(knobsOf(&f.cfg))
	s.slabs.ext = fc.Engine
}

// flashGone tells the engine that the flash header r, whose chunk is being
// freed, no longer needs its value.
func (sl *slabs) flashGone(r rec) {
	if sl.ext != nil {
		sl.ext.Delete(r.flashLoc())
	}
}

// flushBatch bounds the items one class writes per round, so a round
// never holds up the loop for long; a class that wrote keeps the loop in
// its fast cadence, which comes back for the rest.
const flushBatch = 256

// flushToFlash is memcached's storage write thread for one round of the
// background loop: from the largest class down to the one of
// ext_item_size, COLD's tail item is written to flash while it is older
// than ext_item_age, or at once while the class is short of free chunks
// and memory is at its limit. It stops a class at the first item it
// cannot write (too young, a busy shard, no write buffer free). It returns
// how many items it wrote.
func (s *Store) flushToFlash(now uint32) int {
	f := s.flash
	if f == nil {
		return 0
	}
	written := 0
	k := f.knobs.load()
	for id := len(s.slabs.classes) - 1; id >= k.minClass; id-- {
		c := &s.slabs.classes[id]
		for range flushBatch {
			age := k.ItemAge
			if s.shortOfChunks(c) {
				age = 0
			}
			if !s.flushOne(c, age, now) {
				break
			}
			written++
		}
	}
	return written
}

// shortOfChunks is memcached's test for pushing items out early: memory is
// at its limit with no page in the global pool, and class c has fewer free
// chunks than a few pages' worth (three for small chunks, up to one for
// chunks of 2000 bytes or more).
func (s *Store) shortOfChunks(c *slabClass) bool {
	if !s.slabs.arena.exhaustedFor(s.slabs.reserve.keepFor(c.id)) {
		return false
	}
	pages := 1
	switch {
	case c.size < 500:
		pages = 3
	case c.size < 1000:
		pages = 4
	case c.size < 2000:
		pages = 5
	}
	c.mu.Lock()
	free := c.freeChunks()
	c.mu.Unlock()
	return free < pages*c.perPage
}

// flushOne writes the value of COLD's tail item of c to flash and puts a
// header record in the item's place, CAS, flags, times and state bits
// unchanged. It reports whether it did.
func (s *Store) flushOne(c *slabClass, age, now uint32) bool {
	sl := s.slabs
	c.mu.Lock()
	pos := c.q[queueCold].tail
	if pos == nilLoc {
		c.mu.Unlock()
		return false
	}
	r := sl.rec(pos)
	if r.flash() || age != 0 && now-min(now, r.accessed()) <= age || s.debugLocked(r.key()) {
		c.mu.Unlock()
		return false
	}
	sh := s.shardOf(r)
	if !sh.mu.TryLock() {
		c.mu.Unlock()
		return false
	}
	// The shard lock keeps the record where it is (unlinks, moves and
	// evictions all hold it); the class lock goes so that the header's
	// allocation takes locks in a store's order.
	c.mu.Unlock()
	defer sh.mu.Unlock()
	return s.swapToFlash(sh, pos, now)
}

// swapToFlash is flushOne with the item's shard locked.
func (s *Store) swapToFlash(sh *shard, pos uint64, now uint32) bool {
	f, sl := s.flash, s.slabs
	r := sl.rec(pos)
	key := r.key()
	tag := tagOf(xxhash.Sum64(key))
	slot := sh.find(key, tag)
	if slot < 0 || sh.posOf(slot) != int(pos) {
		return false
	}
	flags, exp := r.flags(), r.exptime()
	hclass := s.ItemClass(len(key), flashLocSize, flags)
	if hclass >= len(sl.classes)-1 {
		return false // a header must not look like a chain's head
	}
	value := r.value()
	bucket := extstore.BucketDefault
	if sl.chained(r) {
		f.buf = sl.appendValue(f.buf[:0], pos)
		value = f.buf
		bucket = extstore.BucketChunked
	}
	if exp != 0 && exp-min(exp, now) < f.knobs.load().LowTTL {
		bucket = extstore.BucketLowTTL
	}
	loc, err := f.cfg.Engine.Write(bucket, extstore.Record{Key: key, Value: value, CAS: r.cas(), Flags: flags})
	if err != nil {
		return false // ErrBusy, ErrFull: the next round tries again
	}
	// The key is copied: the allocation may evict in the item's class.
	var kb [MaxKeyLen]byte
	key = kb[:copy(kb[:], key)]
	vlen, cas, stored, bits, chosen := r.vlen(), r.cas(), r.stored(), r.bits(), r.casChosen()
	hpos, res := s.alloc(sh, len(key), flashLocSize, hclass, now)
	if res != Stored {
		f.cfg.Engine.Delete(loc)
		return false
	}
	if slot = sh.find(key, tag); slot < 0 || sh.posOf(slot) != int(pos) {
		// Evicted to make room for its own header.
		sh.freeChunkLocked(hpos)
		f.cfg.Engine.Delete(loc)
		return false
	}
	h := sh.rec(hpos)
	h.writeHeader(len(key), flashLocSize, hclass, flags, exp, cas, now)
	h.markCASChosen(chosen)
	copy(h[recHeader:], key)
	h.setFlashLoc(loc)
	le.PutUint32(h[offVlen:], uint32(vlen))
	le.PutUint32(h[offStored:], stored)
	// The header is a new item to the LRU, as memcached links its header
	// item (do_item_link sets its time): it enters HOT with its last
	// access now. Kept at the value's old access time, it would look old
	// enough to the maintainer to go straight down to COLD, and a page
	// compacted for age would find no header out of COLD to send to OLD.
	h.setAccessed(now)
	h.setBits(bits &^ recTemp)
	h[offClass] |= recFlash
	sh.link(slot, tag, hpos)
	return true
}

// MoveToFlash writes key's value to flash now, wherever the item is in
// its LRU, as the flusher would at COLD's tail: for tests and tools. It
// reports whether the item is on flash now (false without extstore, for a
// missing item, or when the engine has no room at the moment).
func (s *Store) MoveToFlash(key []byte) bool {
	if s.flash == nil {
		return false
	}
	sh, tag := s.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := clampTime(s.Now())
	slot := sh.lookup(key, tag, now)
	if slot < 0 {
		return false
	}
	pos := sh.posOf(slot)
	if sh.rec(pos).flash() {
		return true
	}
	return s.swapToFlash(sh, uint64(pos), now)
}
