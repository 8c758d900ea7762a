package store

import "errors"

// Run-time resizing of the memory limit (memcached's `cache_memlimit`).
//
// The shard count stays what New chose; each shard's ring is replaced by one
// of the new size under the shard's lock, one shard at a time. Live records
// are copied oldest first, so the ring keeps its eviction order and comes out
// compacted; expired and flushed ones are reclaimed on the way, and when the
// live bytes do not fit the new ring the oldest items are evicted (counted as
// evictions, as the ring tail would count them). Growing evicts nothing.
//
// A ring smaller than the largest item refuses such items with OutOfMemory;
// memcached would still store them in chunks. With LargePages (-L) the
// limit is fixed, as memcached's preallocated memory is.

// ErrMemoryLimit is returned by SetMemoryLimit for a limit the store cannot
// take: too small for the shard count, or rings too large to index.
var ErrMemoryLimit = errors.New("store: memory limit out of bounds")

// minRingBytes keeps a ring able to hold a handful of small items.
const minRingBytes = 64 << 10

// MemoryLimit reports the current memory limit in bytes.
func (s *Store) MemoryLimit() int64 { return s.memLimit.Load() }

// SetMemoryLimit resizes every ring so that together they hold limit bytes,
// evicting the oldest items of a shard whose live items do not fit. Under
// DisableEvictions it refuses (ErrMemoryLimit) a limit below what the live
// items need, as checked when it starts.
func (s *Store) SetMemoryLimit(limit int64) error {
	s.resizeMu.Lock()
	defer s.resizeMu.Unlock()
	n := int64(len(s.shards))
	size := (limit - max(s.cfg.Premalloced, 0)) / n &^ 7
	if size < minRingBytes || size > maxRingBytes || s.cfg.LargePages {
		return ErrMemoryLimit
	}
	if s.cfg.DisableEvictions {
		for i := range s.shards {
			sh := &s.shards[i]
			sh.mu.Lock()
			full := sh.live*noEvictFillDen > int(size)*noEvictFillNum
			sh.mu.Unlock()
			if full {
				return ErrMemoryLimit
			}
		}
	}
	now := clampTime(s.Now())
	for i := range s.shards {
		sh := &s.shards[i]
		nb, err := s.newRing(int(size))
		if err != nil {
			return err // the shards resized so far keep their new rings
		}
		sh.mu.Lock()
		old := sh.resize(nb, now)
		sh.mu.Unlock()
		s.freeRing(old)
	}
	s.memLimit.Store(limit)
	return nil
}

// resize moves the shard's live records into nb. Pass one drops what will
// not move (reclaimed or evicted, oldest first); pass two copies the rest
// in ring order and leaves each record's new offset/8 in its old header's
// stored-time field; pass three points every index entry at the new offset
// read from there. No index entry is looked up by position once positions
// start changing, so no two records can be confused.
func (sh *shard) resize(nb []byte, now uint32) (old []byte) {
	excess := sh.live - len(nb)
	sh.forEachLive(func(pos int) {
		r := sh.rec(pos)
		expired := r.expired(now) || sh.flushed(r, now)
		if !expired && excess <= 0 {
			return
		}
		c := &sh.cls[r.class()]
		if expired {
			sh.st.Reclaimed++
			c.reclaimed++
			if r.bits()&recFetched == 0 {
				sh.st.ExpiredUnfetched++
				c.expiredUnfetched++
			}
		} else {
			excess -= r.size()
			sh.countEviction(r, c)
		}
		sh.unlink(sh.slotOfRecord(pos))
	})
	head := 0
	sh.forEachLive(func(pos int) {
		r := sh.rec(pos)
		sz := r.size()
		copy(nb[head:head+sz], r[:sz])
		le.PutUint32(r[offStored:], uint32(head>>3))
		head += sz
	})
	old = sh.buf
	for i, e := range sh.idx.slots {
		if e != 0 {
			pos := int(entryLoc(e)) << 3
			sh.idx.setLoc(i, le.Uint32(old[pos+offStored:]))
		}
	}
	sh.idx.epoch++
	sh.buf = nb
	sh.head, sh.tail, sh.end, sh.wrapped = head, 0, 0, false
	sh.touched = head
	// Every ValueRef and Reservation named a byte of the old ring.
	sh.gen++
	sh.vtail = sh.vhead + uint64(len(nb))
	sh.vhead = sh.vtail + uint64(head)
	if cap(sh.scratch) > len(nb) {
		sh.scratch = nil
	}
	return old
}
