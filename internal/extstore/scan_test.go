package extstore

import (
	"errors"
	"slices"
	"testing"
)

func TestScanPage(t *testing.T) {
	cfg, files := faultConfig(t.TempDir(), 1)
	e := openEngine(t, cfg)
	var locs []Location
	var recs []Record
	for i := 0; len(locs) == 0 || locs[len(locs)-1].Page == 0; i++ {
		rec := testRecord(i, 1000+i*997%9000)
		recs = append(recs, rec)
		locs = append(locs, mustWrite(t, e, BucketDefault, rec))
	}
	onPage0 := len(locs) - 1
	if err := e.ScanPage(1, locs[onPage0].Version, func(Location, Record) bool { return true }); !errors.Is(err, ErrStale) {
		t.Fatalf("scan of a page being written: %v", err)
	}
	e.WaitWrites()
	e.Delete(locs[1]) // still on the page: the caller decides
	var seen int
	err := e.ScanPage(0, locs[0].Version, func(loc Location, rec Record) bool {
		if loc != locs[seen] || !sameRecord(rec, recs[seen]) {
			t.Fatalf("record %d: %+v %q, want %+v %q", seen, loc, rec.Key, locs[seen], recs[seen].Key)
		}
		seen++
		return true
	})
	if err != nil || seen != onPage0 {
		t.Fatalf("scan: %v after %d records, want %d", err, seen, onPage0)
	}
	seen = 0
	e.ScanPage(0, locs[0].Version, func(Location, Record) bool { seen++; return seen < 3 })
	if seen != 3 {
		t.Fatalf("scan went on after fn said stop: %d", seen)
	}
	// A flipped bit costs the rest of that buffer, counted, not a wrong record.
	(*files)[0].set(func(f *faultFile) { f.flip = true })
	seen = 0
	e.ScanPage(0, locs[0].Version, func(loc Location, rec Record) bool {
		i := slices.Index(locs, loc)
		if i < 0 || !sameRecord(rec, recs[i]) {
			t.Fatalf("corrupt record passed: %q at %+v", rec.Key, loc)
		}
		seen++
		return true
	})
	e.mu.Lock()
	bad := e.counters.readBadCRC
	e.mu.Unlock()
	if seen >= onPage0 || bad == 0 {
		t.Fatalf("scan with a flipped bit: %d records, %d bad", seen, bad)
	}
	(*files)[0].set(func(f *faultFile) { f.flip = false })
	e.ClosePage(0, locs[0].Version)
	if e.Check(locs[0]) || e.ScanPage(0, locs[0].Version, nil) == nil {
		t.Fatal("closed page still live")
	}
}
