package store

import (
	"sync"

	"github.com/cespare/xxhash/v2"
)

// shard is one independently locked part of the store: an index over
// records in slab chunks (slab.go), and the counters for what happened to
// them. A record belongs to the shard its key hashes to, wherever its chunk
// lies.
type shard struct {
	mu sync.Mutex

	id       uint64 // shard number, folded into CAS uniques to keep them unique store-wide
	idBits   uint
	noEvict  bool // -M
	hooks    *storeHooks
	slabs    *slabs
	idx      index
	pins     map[int]pin // chunks ValueRefs hold (cursor.go)
	seq      uint64      // last CAS sequence handed out in this shard
	expiring int         // live records with a nonzero exptime (the reclaimer skips shards without any)

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

	st  Stats
	cls []classCounters
	// bumpsDropped counts reads that made an item active in COLD and could
	// not move it to WARM, its class lock busy (bumpFromCold): memcached's
	// lru_bumps_dropped, which `stats reset` leaves alone, as memcached's
	// bump buffers keep their count, so it is not in st.
	bumpsDropped uint64

	_ [64]byte // keep neighbouring shards' locks off this cache line
}

func (sh *shard) rec(pos int) rec { return sh.slabs.rec(uint64(pos)) }

// find returns the index slot of key, or -1.
func (sh *shard) find(key []byte, tag uint32) int {
	ix := &sh.idx
	for i := tag & ix.mask; ; i = (i + 1) & ix.mask {
		e := ix.slots[i]
		if e == 0 {
			return -1
		}
		if entryTag(e) == tag {
			r := sh.rec(int(entryLoc(e)) << 3)
			if r.klen() == len(key) && string(r[recHeader:recHeader+len(key)]) == string(key) {
				return int(i)
			}
		}
	}
}

func (sh *shard) posOf(slot int) int { return int(sh.idx.loc(slot)) << 3 }

// flushed reports whether a flush_all has invalidated r, by memcached's
// rule: stored at or before oldest_live, or given a CAS before oldest_cas.
// A CAS the client chose (recCASChosen) orders nothing: such an item goes
// by its time alone, as every item does in memcached 1.6.45.
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
	return st <= sh.flushLive || c != 0 && c < sh.flushCAS && !r.casChosen()
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

// unlink removes the item in slot from the index, its queue and the
// counters, and gives its chunk back to its class.
func (sh *shard) unlink(slot int) {
	pos := sh.posOf(slot)
	c := &sh.slabs.classes[sh.rec(pos).class()]
	c.mu.Lock()
	sh.unlinkHeld(slot, c)
	c.mu.Unlock()
}

// unlinkHeld is unlink with the item's class c already locked.
func (sh *shard) unlinkHeld(slot int, c *slabClass) {
	pos := sh.posOf(slot)
	sh.uncount(sh.rec(pos))
	sh.idx.remove(slot)
	sh.slabs.remove(c, uint64(pos))
	sh.release(c, pos)
}

// release gives back the chunk of a record just unlinked, unless a
// ValueRef pins it (cursor.go). c, its class, is locked.
func (sh *shard) release(c *slabClass, pos int) {
	if sh.pinned(pos) {
		sh.orphan(pos)
		r := sh.rec(pos)
		r.setBits(recDead)
		r[offQueue] = queueNone
		return
	}
	sh.slabs.freeChunk(c, uint64(pos))
}

// uncount takes the live record r out of the shard's counters.
func (sh *shard) uncount(r rec) {
	c := &sh.cls[r.class()]
	c.items--
	c.requested -= uint64(r.mcSize(sh.noCAS))
	if r.bits()&recTemp != 0 {
		c.temp--
	}
	if r.exptime() != 0 {
		sh.expiring--
	}
	sh.sizesRemove(r)
}

// link records a freshly written record at pos: as a new entry, or in place
// of the item in slot (whose chunk goes back to its class). The record
// enters its class's HOT queue, or TEMP (templru.go).
func (sh *shard) link(slot int, tag uint32, pos int) {
	r := sh.rec(pos)
	c := &sh.cls[r.class()]
	c.items++
	c.requested += uint64(r.mcSize(sh.noCAS))
	q := queueHot
	if sh.flat() {
		q = queueCold // (memcached without its segmented LRU has one queue)
	}
	if sh.temporary(r) {
		r.setBits(recTemp)
		c.temp++
		q = queueTemp
	} else {
		r.clearBits(recTemp)
	}
	if r.exptime() != 0 {
		sh.expiring++
	}
	sh.sizesAdd(r)
	sc := &sh.slabs.classes[r.class()]
	if slot < 0 {
		sc.mu.Lock()
		sh.slabs.push(sc, q, uint64(pos))
		sc.mu.Unlock()
		sh.idx.insert(tag, uint64(pos>>3))
		return
	}
	old := sh.posOf(slot)
	sh.uncount(sh.rec(old))
	sh.idx.setLoc(slot, uint64(pos>>3))
	oc := &sh.slabs.classes[sh.rec(old).class()]
	sc.mu.Lock()
	sh.slabs.push(sc, q, uint64(pos))
	if oc != sc { // (an overwrite of the same size takes the class lock once)
		sc.mu.Unlock()
		oc.mu.Lock()
	}
	sh.slabs.remove(oc, uint64(old))
	sh.release(oc, old)
	oc.mu.Unlock()
}

// slotOfRecord finds the index slot pointing at the live record at pos.
func (sh *shard) slotOfRecord(pos int) int {
	r := sh.rec(pos)
	return sh.idx.findLoc(tagOf(xxhash.Sum64(r.key())), uint64(pos>>3))
}

// casOrNext returns the client's explicit CAS (meta E) when it gave one,
// else the next unique.
func (sh *shard) casOrNext(explicit NewCAS) uint64 {
	if explicit.Set {
		return explicit.Value
	}
	return sh.nextCAS()
}

// stampCAS gives the existing record r a new CAS: the client's
// (explicit.Set), marked as such, or a fresh one.
func (sh *shard) stampCAS(r rec, explicit NewCAS) {
	r.setCAS(sh.casOrNext(explicit))
	r.markCASChosen(explicit.chosen())
}

// nextCAS hands out a CAS unique that no other shard can produce.
func (sh *shard) nextCAS() uint64 {
	sh.seq++
	return sh.seq<<sh.idBits | sh.id
}

// alloc takes a chunk of class for a record of size bytes for shard sh
// (locked), reclaiming and evicting in the class as memcached does; it
// fails with OutOfMemory when the class yields nothing.
func (s *Store) alloc(sh *shard, klen, vlen, class int, now uint32) (int, Result) {
	var pos uint64
	if s.slabs.chainedSize(klen, vlen) {
		pos = s.allocChain(sh, klen, vlen, now)
	} else {
		pos = s.allocIn(&s.slabs.classes[class], sh, now)
	}
	if pos == nilLoc {
		return 0, OutOfMemory
	}
	return int(pos), Stored
}

// markRead marks r, the record at pos, as read at now, as memcached's
// do_item_bump: the first read of an item only marks it fetched, a later
// one makes it active (referenced), which the LRU's tail pulls act on
// (lru.go): an active item moves up to WARM instead of down or out; one
// made active in COLD moves to WARM at once (bumpFromCold). So a key read
// once is evicted like one never read. Without the segmented
// LRU (flat) memcached moves a read item to its queue's head, if it
// was last moved more than a minute before (ITEM_UPDATE_INTERVAL).
//
// It reports whether the read leaves the item active as memcached sees it
// right after its bump: hit at least twice since it was last moved
// (memcached's recache checks this when the read completes, before its
// maintainer has processed the bump that clears it).
func (sh *shard) markRead(r rec, pos int, now uint32) (active bool) {
	switch {
	case sh.flat():
		r.setBits(recFetched)
		if now-min(now, r.accessed()) > itemUpdateInterval {
			c := &sh.slabs.classes[r.class()]
			c.mu.Lock()
			sh.slabs.move(c, r.queue(), uint64(pos))
			c.mu.Unlock()
		}
	case r.bits()&recFetched != 0:
		r.setBits(recReferenced)
		active = true
		if r.queue() == queueCold {
			sh.bumpFromCold(r, pos)
		}
	default:
		r.setBits(recFetched)
	}
	r.setAccessed(now)
	return active
}

// bumpFromCold moves r, at pos in COLD and active now, to WARM's head,
// as memcached's do_item_bump hands such an item to lru_bump_async, whose
// maintainer moves it within its next loop: a hit in COLD is not left for
// the tail pull to find, so the flash compactor, which rescues what is
// out of COLD and drops the rest when a page is picked for age, keeps the
// items read while cold. The class lock is only tried: when it is busy
// (an allocation or the maintainer at work) the item stays active in COLD,
// for the tail pull or the next read to move, as memcached drops a bump
// whose buffer is full (and counts it in lru_bumps_dropped); a read never
// waits for it.
func (sh *shard) bumpFromCold(r rec, pos int) {
	c := &sh.slabs.classes[r.class()]
	if !c.mu.TryLock() {
		sh.bumpsDropped++
		return
	}
	if r.queue() == queueCold { // (under the class lock, as every queue move)
		r.clearBits(recReferenced)
		sh.slabs.move(c, queueWarm, uint64(pos))
		c.movesToWarm++ // (memcached's item_link_q_warm counts it)
	}
	c.mu.Unlock()
}

// itemUpdateInterval is memcached's ITEM_UPDATE_INTERVAL: without the
// segmented LRU, a read moves an item up at most once a minute.
const itemUpdateInterval = 60

// countEviction reports the eviction of r to the hook and counts it in the
// shard's and its class's statistics (c is r's class).
func (sh *shard) countEviction(r rec, c *classCounters, now uint32) {
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
		c.evictedActive++
	}
	c.evictedTime = now - min(now, r.accessed())
}
