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
	err := e.ScanPage(cand.Page, cand.Version, func(loc extstore.Location, rec extstore.Record) bool {
		s.rescueRecord(cand, loc, rec, &waits)
		return true
	})
	if err != nil {
		if watched {
			f.flashEvent(compactEvent("compact_abort", cand.Page))
		}
		return false, true // being written, or gone: nothing to close yet
	}
	if watched {
		f.flashEvent(compactEvent("compact_read_end", cand.Page, "offset", e.PageSize(),
			"rescues", f.compactRescues.Load()-rescues, "rescues_realloc", uint64(0),
			"lost", f.compactLost.Load()-lost, "lost_oom", uint64(0), "skipped", f.compactSkipped.Load()-skipped))
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

// rescueRecord writes the record at loc again if its item still points
// there, as memcached's compactor does: an item at its COLD tail is left
// behind when the page was picked for age (drop unread) or goes to the
// coldcompact bucket when there is one.
func (s *Store) rescueRecord(cand extstore.Candidate, loc extstore.Location, rec extstore.Record, waits *int) {
	f := s.flash
	e := f.cfg.Engine
	now := clampTime(s.Now())
	sh, tag := s.flashShard(rec.Key)
	sh.mu.Lock()
	r, ok := s.stillAt(sh, tag, rec.Key, loc, now)
	if !ok {
		sh.mu.Unlock()
		return
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
			sh.mu.Unlock()
			f.compactSkipped.Add(1)
			return // its reads will miss once the page is closed
		}
	}
	sh.mu.Unlock()
	var to extstore.Location
	var err error
	for tries := max(*waits, rescueMinTries); ; tries-- {
		if to, err = e.Write(bucket, rec); err == nil || tries <= 1 {
			break
		}
		*waits--
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		f.compactLost.Add(1)
		return
	}
	sh.mu.Lock()
	r, ok = s.stillAt(sh, tag, rec.Key, loc, clampTime(s.Now()))
	if ok {
		r.setFlashLoc(to)
		e.Delete(loc)
		f.compactRescues.Add(1)
		switch bucket {
		case extstore.BucketColdCompact:
			f.compactRescCold.Add(1)
		case extstore.BucketOld:
			f.compactRescOld.Add(1)
		}
	} else {
		e.Delete(to)
	}
	sh.mu.Unlock()
}
