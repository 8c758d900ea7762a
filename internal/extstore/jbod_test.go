package extstore

import (
	"path/filepath"
	"testing"
)

// Pages interleave over the files as memcached 1.6.45 lays them out
// (checked with its stats extstore: the last ext_path given holds page 0),
// a file with fewer pages dropping out once it has given them all, and each
// file's pages sit back to back from its start.
func TestJBODLayout(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig(dir, 0)
	cfg.Files = []FileSpec{
		{Path: filepath.Join(dir, "a"), Size: 3 * tPage},
		{Path: filepath.Join(dir, "b"), Size: tPage + tPage/2}, // one whole page
		{Path: filepath.Join(dir, "c"), Size: 2 * tPage, FreeBucket: BucketLowTTL},
	}
	e := openEngine(t, cfg)
	type slot struct {
		file int
		base int64
	}
	want := []slot{{2, 0}, {1, 0}, {0, 0}, {2, tPage}, {0, tPage}, {0, 2 * tPage}}
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
	rec := testRecord(1, tWbuf) // one record per buffer, two per page
	rec.Value = rec.Value[:tWbuf-headerSize-len(rec.Key)]
	var pagesUsed []uint16
	for range 4 {
		loc := mustWrite(t, e, BucketDefault, rec)
		if len(pagesUsed) == 0 || pagesUsed[len(pagesUsed)-1] != loc.Page {
			pagesUsed = append(pagesUsed, loc.Page)
		}
	}
	if len(pagesUsed) != 2 || pagesUsed[0] != 1 || pagesUsed[1] != 2 {
		t.Errorf("default bucket used pages %v, want [1 2] (files b then a)", pagesUsed)
	}
	if loc := mustWrite(t, e, BucketLowTTL, rec); loc.Page != 0 {
		t.Errorf("lowttl write on page %d, want 0 (file c)", loc.Page)
	}
}
