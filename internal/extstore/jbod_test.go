package extstore

import (
	"path/filepath"
	"testing"
)

// Pages interleave over the files as memcached lays them out, a file with
// fewer pages dropping out once it has given them all, and each file's
// pages sit back to back from its start.
func TestJBODLayout(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig(dir, 0)
	cfg.Files = []FileSpec{
		{Path: filepath.Join(dir, "a"), Size: 12 << 20},
		{Path: filepath.Join(dir, "b"), Size: 4<<20 + 1<<20}, // one whole page
		{Path: filepath.Join(dir, "c"), Size: 8 << 20, FreeBucket: BucketLowTTL},
	}
	e := openEngine(t, cfg)
	type slot struct {
		file int
		base int64
	}
	want := []slot{{0, 0}, {1, 0}, {2, 0}, {0, 4 << 20}, {2, 4 << 20}, {0, 8 << 20}}
	if len(e.pages) != len(want) {
		t.Fatalf("%d pages, want %d", len(e.pages), len(want))
	}
	for i, w := range want {
		p := &e.pages[i]
		if p.file != e.files[w.file] || p.base != w.base {
			t.Errorf("page %d at file %v offset %d, want file %d offset %d", i, p.file, p.base, w.file, w.base)
		}
		if wantB := cfg.Files[w.file].FreeBucket; p.freeBucket != wantB {
			t.Errorf("page %d serves %s, want %s", i, p.freeBucket, wantB)
		}
	}
	// Consecutive default pages alternate devices; lowttl takes its own.
	rec := testRecord(1, 4<<20-2<<20) // two buffers' worth per page: one record per buffer
	rec.Value = rec.Value[:2<<20-headerSize-len(rec.Key)]
	var pagesUsed []uint16
	for range 4 {
		loc := mustWrite(t, e, BucketDefault, rec)
		if len(pagesUsed) == 0 || pagesUsed[len(pagesUsed)-1] != loc.Page {
			pagesUsed = append(pagesUsed, loc.Page)
		}
	}
	if len(pagesUsed) != 2 || pagesUsed[0] != 0 || pagesUsed[1] != 1 {
		t.Errorf("default bucket used pages %v, want [0 1] (files a then b)", pagesUsed)
	}
	if loc := mustWrite(t, e, BucketLowTTL, rec); loc.Page != 2 {
		t.Errorf("lowttl write on page %d, want 2 (file c)", loc.Page)
	}
}
