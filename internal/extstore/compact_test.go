package extstore

import (
	"fmt"
	"path/filepath"
	"testing"
)

// pickerEngine has a file of four pages for each bucket given.
func pickerEngine(t *testing.T, buckets ...Bucket) *Engine {
	dir := t.TempDir()
	cfg := smallConfig(dir, 0)
	for i, b := range buckets {
		cfg.Files = append(cfg.Files, FileSpec{Path: filepath.Join(dir, fmt.Sprint(i)), Size: tFile, FreeBucket: b})
	}
	return openEngine(t, cfg)
}

// use marks the n-th page (by id) reserved for fb as written and holding
// live bytes; version orders pages by age.
func use(e *Engine, fb Bucket, n int, version, live uint64, active bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.pages {
		p := &e.pages[i]
		if p.freeBucket != fb {
			continue
		}
		if n > 0 {
			n--
			continue
		}
		if p.free {
			e.nfree--
		}
		p.free, p.active, p.version, p.bytesUsed, p.objects = false, active, version, live, 1
		return
	}
	panic("no such page")
}

// useAll fills every page of fb, full of live bytes, versions from v.
func useAll(e *Engine, fb Bucket, v uint64) {
	for n := range 4 {
		use(e, fb, n, v+uint64(n), tPage, false)
	}
}

func pageOf(e *Engine, fb Bucket, n int) uint16 {
	for i := range e.pages {
		if e.pages[i].freeBucket == fb {
			if n == 0 {
				return uint16(i)
			}
			n--
		}
	}
	panic("no such page")
}

func TestCompactCandidate(t *testing.T) {
	pol := Policy{CompactUnder: 1, DropUnder: 1, MaxFrag: 0.8}
	dropUnread := pol
	dropUnread.DropUnread = true
	d := BucketDefault
	tests := []struct {
		name    string
		buckets []Bucket
		pol     Policy
		setup   func(e *Engine)
		want    func(e *Engine) (Candidate, bool)
	}{
		{"all free", []Bucket{d}, pol, func(*Engine) {}, nil},
		{"free pages left", []Bucket{d}, pol, func(e *Engine) {
			for n := range 3 {
				use(e, d, n, uint64(n+1), tPage/10, false)
			}
		}, nil},
		{"full, nothing fragmented, no drop", []Bucket{d}, pol, func(e *Engine) { useAll(e, d, 1) }, nil},
		{"full, drop unread takes the oldest", []Bucket{d}, dropUnread, func(e *Engine) { useAll(e, d, 5) },
			func(e *Engine) (Candidate, bool) {
				return Candidate{Page: pageOf(e, d, 0), Version: 5, DropUnread: true}, true
			}},
		{"most fragmented under max_frag", []Bucket{d}, dropUnread, func(e *Engine) {
			useAll(e, d, 1)
			use(e, d, 1, 2, tPage/2, false)
			use(e, d, 3, 4, tPage/4, false)
			use(e, d, 2, 3, tPage*9/10, false) // over the frag limit
		}, func(e *Engine) (Candidate, bool) { return Candidate{Page: pageOf(e, d, 3), Version: 4}, true }},
		{"active page skipped", []Bucket{d}, pol, func(e *Engine) {
			useAll(e, d, 1)
			use(e, d, 0, 9, 0, true)
		}, nil},
		{"lowttl never compacted", []Bucket{d, BucketLowTTL}, dropUnread, func(e *Engine) {
			useAll(e, BucketLowTTL, 1)
			use(e, BucketLowTTL, 2, 3, 0, false)
		}, nil},
		{"old bucket: oldest goes to old", []Bucket{d, BucketOld}, pol, func(e *Engine) { useAll(e, d, 10) },
			func(e *Engine) (Candidate, bool) {
				return Candidate{Page: pageOf(e, d, 0), Version: 10, UseOld: true}, true
			}},
		{"coldcompact bucket: oldest compacted cold", []Bucket{d, BucketColdCompact}, pol, func(e *Engine) { useAll(e, d, 10) },
			func(e *Engine) (Candidate, bool) {
				return Candidate{Page: pageOf(e, d, 0), Version: 10, ColdCompact: true}, true
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := pickerEngine(t, tt.buckets...)
			tt.setup(e)
			got, ok := e.CompactCandidate(tt.pol)
			var want Candidate
			var wantOK bool
			if tt.want != nil {
				want, wantOK = tt.want(e)
			}
			if got != want || ok != wantOK {
				t.Fatalf("CompactCandidate = %+v, %v; want %+v, %v", got, ok, want, wantOK)
			}
		})
	}
}

// A coldcompact bucket with no free page loses its oldest page at once.
func TestCompactCandidateEvictsFullColdBucket(t *testing.T) {
	e := pickerEngine(t, BucketDefault, BucketColdCompact)
	useAll(e, BucketColdCompact, 3)
	if c, ok := e.CompactCandidate(Policy{CompactUnder: 1, DropUnder: 1, MaxFrag: 0.8}); ok {
		t.Fatalf("candidate %+v, want none", c)
	}
	id := pageOf(e, BucketColdCompact, 0)
	if d := e.Pages(nil)[id]; d.Version != 0 {
		t.Fatalf("oldest coldcompact page not evicted: %+v", d)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counters.pageEvictions != 1 {
		t.Fatalf("evictions %d, want 1", e.counters.pageEvictions)
	}
}

func TestDefaultPolicy(t *testing.T) {
	cfg := DefaultConfig(FileSpec{Path: "a", Size: 64 << 30}, FileSpec{Path: "b", Size: 1 << 30})
	if p := DefaultPolicy(cfg); p.CompactUnder != 1 || p.DropUnder != 1 || p.MaxFrag != 0.8 {
		t.Fatalf("last file 16 pages: %+v", p)
	}
	cfg.Files[0], cfg.Files[1] = cfg.Files[1], cfg.Files[0]
	if p := DefaultPolicy(cfg); p.CompactUnder != 10 || p.DropUnder != 10 {
		t.Fatalf("last file 1024 pages: %+v", p)
	}
}
