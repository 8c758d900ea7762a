package extstore

// Policy is memcached's compaction tuning: ext_compact_under,
// ext_drop_under (free pages), ext_max_frag and ext_drop_unread.
type Policy struct {
	CompactUnder uint64
	DropUnder    uint64
	MaxFrag      float64
	DropUnread   bool
}

// DefaultPolicy is memcached's: both thresholds 1% of the pages of the last
// ext_path given (at least 1) unless set, ext_max_frag 0.8.
func DefaultPolicy(cfg Config) Policy {
	under := uint64(1)
	if n := len(cfg.Files); n > 0 && cfg.PageSize > 0 {
		under = max(1, uint64(float64(cfg.pageCount(cfg.Files[n-1]))*0.01))
	}
	return Policy{CompactUnder: under, DropUnder: under, MaxFrag: 0.8}
}

// Candidate is a page the compactor should empty: read it with ScanPage,
// rewrite the records whose RAM item still points at them, then
// ClosePage.
type Candidate struct {
	Page    uint16
	Version uint64
	// DropUnread: rescue only records read since they were written;
	// the page was picked for age, not fragmentation.
	DropUnread bool
	// UseOld: rescue into BucketOld rather than BucketCompact.
	UseOld bool
	// ColdCompact: a coldcompact bucket exists for cold rescues.
	ColdCompact bool
}

// bucketTally is one free bucket's pages as the picker sees them.
type bucketTally struct {
	total, free   uint64
	lowest        *page // oldest page not being written
	fragmented    *page // most fragmented page under the frag limit
	fragmentedLen uint64
}

// CompactCandidate picks the page to compact next, as memcached's
// compaction thread does. Per free bucket (lowttl pages are never
// compacted): when fewer than CompactUnder pages are free, the most
// fragmented page whose live bytes are under MaxFrag of a page; failing
// that, when fewer than DropUnder pages are free and drop-unread, old or
// coldcompact pages are configured, the oldest page. A full coldcompact or
// old bucket instead has its oldest page evicted here, and no candidate.
func (e *Engine) CompactCandidate(pol Policy) (Candidate, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.nfree == len(e.pages) {
		return Candidate{}, false
	}
	var tally [BucketCount]bucketTally
	limit := uint64(float64(e.pageSize) * pol.MaxFrag)
	for i := range e.pages {
		p := &e.pages[i]
		t := &tally[p.freeBucket]
		t.total++
		if p.free {
			t.free++
			continue
		}
		if p.active || p.closed {
			continue
		}
		if t.lowest == nil || p.version < t.lowest.version {
			t.lowest = p
		}
		if frag := e.pageSize - p.bytesUsed; p.bytesUsed < limit && frag > t.fragmentedLen {
			t.fragmented, t.fragmentedLen = p, frag
		}
	}
	c := Candidate{ColdCompact: tally[BucketColdCompact].total > 0}
	hasOld := tally[BucketOld].total > 0
	for _, b := range [2]Bucket{BucketColdCompact, BucketOld} {
		if t := &tally[b]; t.total > 0 && t.free == 0 && t.lowest != nil {
			e.closePage(t.lowest, true)
			e.maybeFree(t.lowest)
			return Candidate{}, false
		}
	}
	for b := range Bucket(BucketCount) {
		t := &tally[b]
		if t.total == 0 || b == BucketLowTTL || t.free >= pol.CompactUnder {
			continue
		}
		if p := t.fragmented; p != nil {
			c.Page, c.Version = p.id, p.version
			return c, true
		}
		if t.free >= pol.DropUnder || t.lowest == nil || b == BucketColdCompact || b == BucketOld {
			continue
		}
		c.DropUnread = pol.DropUnread
		if c.DropUnread || c.ColdCompact || hasOld {
			c.UseOld = hasOld
			c.Page, c.Version = t.lowest.id, t.lowest.version
			return c, true
		}
	}
	return Candidate{}, false
}
