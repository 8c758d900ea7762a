package store

import (
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/gocached/gocached/internal/extstore"
)

// Compaction (memcached's storage compaction thread): a page the engine
// picks (most fragmented, or oldest when pages run short) is read back,
// the records whose item still points at them are written again, and the
// page is reclaimed. It runs on a goroutine of its own, since it reads
// whole pages from the files; the background loop kicks it after rounds
// that saw activity, a change of the ext_* knobs kicks it, and it looks
// again by itself while a candidate is left; so an idle store with
// nothing to compact never wakes it.

// compactPagesPerKick bounds one kick's work; the next kick goes on.
const compactPagesPerKick = 16

// compactWaits is how many 1 ms waits for a write buffer one page's
// rescues may spend, as memcached's compactor: 5000, and each record
// still tries rescueMinTries times once they are spent, so a page read
// while the writer is busy loses no records to a short wait.
const (
	compactWaits   = 5000
	rescueMinTries = 10
)

// Counters of the compactor, memcached's extstore_compact_*.
type compactCounters struct {
	lost, rescues, skipped uint64
}

// kickCompactor asks the compactor to look for a page to compact.
func (s *Store) kickCompactor() {
	select {
	case s.flash.compactKick <- struct{}{}:
	default:
	}
}

// compactRetry is the compactor's wait before it looks again while a
// candidate page remains: its kick's bound was reached, or the page was
// still being written. Without it the rest would wait for the next client
// write, however long that takes.
const compactRetry = 100 * time.Millisecond

// compactLoop is the compactor goroutine, until stop is closed (Close).
func (s *Store) compactLoop(stop <-chan struct{}) {
	more := false // a candidate was left for later
	for {
		var tick <-chan time.Time
		switch {
		case more:
			tick = time.After(compactRetry)
		case s.flash.watched():
			tick = time.After(s.flash.watchedWait())
		}
		select {
		case <-stop:
			return
		case <-s.flash.compactKick:
		case <-tick:
		}
		s.flash.compactRounds.Add(1)
		more = true // the bound is reached unless a look ends it first
		for range compactPagesPerKick {
			done, left := s.compactOnce()
			if !done {
				more = left
				break
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}
}

// compactOnce compacts the engine's current candidate page, if any, and
// reports whether it did, and if not, whether a candidate is left (one
// being written, to be tried again).
func (s *Store) compactOnce() (done, left bool) {
	f := s.flash
	e := f.cfg.Engine
	pol := f.knobs.load().Policy
	watched := f.watched()
	if watched && e.Stats().PagesUsed > 0 {
		f.flashEvent(fragInfo(pol.MaxFrag, e.PageSize()))
	}
	cand, ok := e.CompactCandidate(pol)
	if !ok {
		return false, false
	}
	rescues, lost, skipped := f.compactRescues.Load(), f.compactLost.Load(), f.compactSkipped.Load()
	if watched {
		f.flashEvent(compactEvent("compact_start", cand.Page, "version", cand.Version))
		f.flashEvent(compactEvent("compact_read_start", cand.Page, "offset", uint64(0)))
	}
	waits := compactWaits
	var reallocs uint64
	err := e.ScanPage(cand.Page, cand.Version, func(loc extstore.Location, rec extstore.Record) bool {
		if s.rescueRecord(cand, loc, rec, &waits) == rescuedRealloc {
			reallocs++
		}
		return true
	})
	if watched {
		f.flashEvent(compactEvent("compact_read_end", cand.Page, "offset", e.PageSize(),
			"rescues", f.compactRescues.Load()-rescues, "rescues_realloc", reallocs,
			"lost", f.compactLost.Load()-lost, "lost_oom", uint64(0), "skipped", f.compactSkipped.Load()-skipped))
	}
	if err != nil {
		// The page went while it was read: most often its last live
		// records were just rescued, which freed it (ScanPage). memcached
		// aborts then and looks for the next page at once.
		if watched {
			f.flashEvent(compactEvent("compact_abort", cand.Page))
		}
		if err == extstore.ErrStale {
			return true, false
		}
		return false, true // unreadable now: tried again later
	}
	e.ClosePage(cand.Page, cand.Version)
	if watched {
		f.flashEvent(compactEvent("compact_end", cand.Page))
	}
	return true, false
}

// flashShard is key's shard and tag, without telling the background loop
// (the compactor's lookups are not client activity).
func (s *Store) flashShard(key []byte) (*shard, uint32) {
	h := xxhash.Sum64(key)
	return &s.shards[h&s.shardMask], tagOf(h)
}

// stillAt reports whether key's item is the live flash header of loc.
func (s *Store) stillAt(sh *shard, tag uint32, key []byte, loc extstore.Location, now uint32) (rec, bool) {
	slot := sh.find(key, tag)
	if slot < 0 {
		return nil, false
	}
	r := sh.rec(sh.posOf(slot))
	if !r.flash() || r.flashLoc() != loc || sh.flushed(r, now) || r.expired(now) {
		return nil, false
	}
	return r, true
}

// What one record of a compacted page came to.
type rescueOutcome int

const (
	rescueGone     rescueOutcome = iota // its item no longer points there
	rescueSkipped                       // left behind: cold, page picked for age
	rescueNoRoom                        // no write buffer or page free now
	rescued                             // written again, its header updated
	rescuedRealloc                      // written again into a new header: the old one is in use
)

// rescueRecord writes the record at loc again if its item still points
// there, as memcached's compactor does: an item at its COLD tail is left
// behind when the page was picked for age (drop unread) or goes to the
// coldcompact bucket when there is one. While no write buffer is free it
// waits 1 ms at a time, spending the page's waits.
func (s *Store) rescueRecord(cand extstore.Candidate, loc extstore.Location, rec extstore.Record, waits *int) rescueOutcome {
	f := s.flash
	for tries := max(*waits, rescueMinTries); ; tries-- {
		out := s.tryRescue(cand, loc, rec)
		switch out {
		case rescueSkipped:
			f.compactSkipped.Add(1)
		case rescueNoRoom:
			if tries > 1 {
				*waits--
				time.Sleep(time.Millisecond)
				continue
			}
			f.compactLost.Add(1)
		}
		return out
	}
}

// tryRescue is one attempt of rescueRecord, under the item's shard lock
// so the item cannot go meanwhile. As memcached's compactor, the record
// is deleted from its page before it is written again: a page whose last
// live records are rescued is freed by that, and the rescue can be
// written to it rather than evict a page for want of one. A write that
// finds no room takes the delete back.
func (s *Store) tryRescue(cand extstore.Candidate, loc extstore.Location, rec extstore.Record) rescueOutcome {
	f := s.flash
	e := f.cfg.Engine
	now := clampTime(s.Now())
	sh, tag := s.flashShard(rec.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r, ok := s.stillAt(sh, tag, rec.Key, loc, now)
	if !ok {
		return rescueGone
	}
	bucket := extstore.BucketCompact
	if cand.UseOld {
		bucket = extstore.BucketOld
	}
	if r.queue() == queueCold {
		switch {
		case cand.ColdCompact:
			bucket = extstore.BucketColdCompact
		case cand.DropUnread:
			e.Delete(loc) // its reads miss once the page is closed
			return rescueSkipped
		}
	}
	e.Delete(loc)
	to, err := e.Write(bucket, rec)
	if err != nil {
		e.Undelete(loc)
		return rescueNoRoom
	}
	out := rescued
	slot := sh.find(rec.Key, tag)
	if pos := sh.posOf(slot); sh.pinned(pos) {
		if !s.reallocHeader(sh, slot, tag, to, now) {
			e.Delete(to)
			f.compactLost.Add(1)
			return rescueGone
		}
		out = rescuedRealloc
	} else {
		r.setFlashLoc(to)
	}
	f.compactRescues.Add(1)
	switch bucket {
	case extstore.BucketColdCompact:
		f.compactRescCold.Add(1)
	case extstore.BucketOld:
		f.compactRescOld.Add(1)
	}
	return out
}

// reallocHeader puts the rescued location to in a copy of the flash
// header in slot, whose chunk a reference pins (a reader, or memcached-
// debug's `debugitem ref`): as memcached's compactor, which rewrites a
// header in place only when nobody else holds it, and otherwise links a
// new one in its place. The old header keeps its bits for whoever holds
// it, but no location, so its release deletes nothing. It reports false
// when no chunk could be had.
func (s *Store) reallocHeader(sh *shard, slot int, tag uint32, to extstore.Location, now uint32) bool {
	pos := sh.posOf(slot)
	r := sh.rec(pos)
	var kb [MaxKeyLen]byte
	key := kb[:copy(kb[:], r.key())]
	class := r.class()
	hpos, res := s.alloc(sh, len(key), flashLocSize, class, now)
	if res != Stored {
		return false
	}
	if slot = sh.find(key, tag); slot < 0 || sh.posOf(slot) != pos {
		// Evicted to make room for its own copy.
		sh.freeChunkLocked(hpos)
		return false
	}
	n := recHeader + len(key) + flashLocSize
	h := sh.rec(hpos)
	copy(h[:n], r[:n])
	h.setFlashLoc(to)
	h.setAccessed(now) // linked anew, as memcached's item_replace links it
	r.setFlashLoc(extstore.Location{})
	sh.link(slot, tag, hpos)
	return true
}
