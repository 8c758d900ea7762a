package extstore

import (
	"errors"
	"testing"
)

// A full store drops its oldest page: its locations read as misses, the
// page comes back with a new version, and writing goes on.
func TestFullStoreEvictsOldestPage(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 1)) // 4 pages of 4 records
	var locs []Location
	var recs []Record
	for i := range 40 {
		recs = append(recs, quarterPage(i))
		locs = append(locs, mustWrite(t, e, BucketDefault, recs[i]))
		if i%4 == 3 {
			e.WaitWrites() // lets the page go inactive, so evictable
		}
	}
	e.WaitWrites()
	for i, loc := range locs {
		got, err := e.Read(loc)
		live := i >= 40-16 // the last four pages' worth
		switch {
		case live && (err != nil || !sameRecord(got, recs[i])):
			t.Fatalf("record %d at %+v: %q, %v; want it", i, loc, got.Key, err)
		case !live && !errors.Is(err, ErrStale):
			t.Fatalf("record %d at %+v: %q, %v; want ErrStale", i, loc, got.Key, err)
		}
	}
	if locs[0].Page != locs[32].Page || locs[32].Version <= locs[0].Version {
		t.Fatalf("page reuse: first %+v, ninth page %+v", locs[0], locs[32])
	}
	e.mu.Lock()
	c := e.counters
	e.mu.Unlock()
	if c.pageEvictions != 6 || c.objectsEvicted != 24 || c.bytesEvicted != 24*tPage/4 || c.pageAllocs != 10 || c.pageReclaims != 6 {
		t.Fatalf("counters %+v", c)
	}
	if c.objectsUsed != 16 || c.bytesUsed != 16*tPage/4 {
		t.Fatalf("used %d objects %d bytes, want 16 records, 4 pages", c.objectsUsed, c.bytesUsed)
	}
}

// Deleting every record of a written page frees it; a location deleted
// twice, or after its page went, counts once.
func TestDeleteFreesEmptyPage(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 1))
	var locs []Location
	for i := range 5 {
		locs = append(locs, mustWrite(t, e, BucketDefault, quarterPage(i)))
	}
	e.WaitWrites()
	for _, loc := range locs[:3] {
		if !e.Delete(loc) {
			t.Fatalf("Delete(%+v) = false", loc)
		}
	}
	if d := e.Pages(nil)[0]; d.BytesUsed != tPage/4 || d.Version != locs[0].Version || d.Bucket != BucketDefault {
		t.Fatalf("page 0 after 3 deletes: %+v", d)
	}
	if !e.Delete(locs[3]) || e.Delete(locs[3]) {
		t.Fatal("last delete should count once")
	}
	if d := e.Pages(nil)[0]; d.Version != 0 || d.BytesUsed != 0 {
		t.Fatalf("page 0 not freed: %+v", d)
	}
	for _, loc := range locs[:4] {
		if e.Check(loc) || e.Delete(loc) {
			t.Fatalf("location %+v still live after its page was freed", loc)
		}
	}
	if !e.Check(locs[4]) {
		t.Fatal("the record on the page being written went with page 0")
	}
	// The page being written is not freed by deletes.
	e.Delete(locs[4])
	if d := e.Pages(nil)[1]; d.Version != locs[4].Version || !d.Active {
		t.Fatalf("active page after its only record's delete: %+v", d)
	}
}

// A read in flight keeps an evicted page from reuse until it completes.
func TestEvictWaitsForReads(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 1))
	rec := quarterPage(1)
	loc := mustWrite(t, e, BucketDefault, rec)
	for i := range 4 { // the fifth record sends page 0's last buffer
		mustWrite(t, e, BucketDefault, quarterPage(i+2))
	}
	e.WaitWrites()
	buf := make([]byte, loc.Len)
	pl := e.planRead(loc, buf)
	e.EvictPage(loc.Page, loc.Version)
	if d := e.Pages(nil)[0]; d.Version != loc.Version {
		t.Fatalf("evicted page freed under a read: %+v", d)
	}
	if e.Check(loc) {
		t.Fatal("evicted page still checks live")
	}
	n, err := pl.file.ReadAt(buf, pl.off)
	got, err := e.finishRead(pl, buf, n, err)
	if err != nil || !sameRecord(got, rec) {
		t.Fatalf("read begun before the eviction: %q, %v", got.Key, err)
	}
	if d := e.Pages(nil)[0]; d.Version != 0 {
		t.Fatalf("evicted page not freed after the read: %+v", d)
	}
}
