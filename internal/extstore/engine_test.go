package extstore

import (
	"testing"
)

func TestWriteReadRoundTrip(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 2))
	sizes := []int{0, 1, 100, 4096, 10 << 10, tWbuf/2 - 100, tWbuf - headerSize - 8}
	var locs []Location
	var recs []Record
	for i := range 21 {
		rec := testRecord(i, sizes[i%len(sizes)])
		locs = append(locs, mustWrite(t, e, BucketDefault, rec))
		recs = append(recs, rec)
	}
	check := func(when string) {
		for i, loc := range locs {
			got, err := e.Read(loc)
			if err != nil || !sameRecord(got, recs[i]) {
				t.Fatalf("%s: Read(%+v) = %q, %v; want %q", when, loc, got.Key, err, recs[i].Key)
			}
		}
	}
	check("buffered")
	e.WaitWrites()
	check("flushed")
}

func TestWriteTooLarge(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 1))
	rec := Record{Key: []byte("k"), Value: make([]byte, tWbuf)}
	if _, err := e.Write(BucketDefault, rec); err != ErrTooLarge {
		t.Fatalf("Write of a value the size of a buffer: %v, want ErrTooLarge", err)
	}
	rec.Value = rec.Value[:tWbuf-headerSize-1]
	if _, err := e.Write(BucketDefault, rec); err != nil {
		t.Fatalf("Write of a record exactly a buffer: %v", err)
	}
}

// Locations fill buffers and pages in order, and a bucket writes to its
// own page.
func TestLocationsLayout(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 1))
	rec := quarterPage(1)
	var got []Location
	for range 5 {
		got = append(got, mustWrite(t, e, BucketDefault, rec))
	}
	low := mustWrite(t, e, BucketLowTTL, rec)
	for i, loc := range got {
		wantPage, wantOff := uint16(i/4), uint32(i%4)*tPage/4
		if loc.Page != wantPage || loc.Offset != wantOff || loc.Len != tPage/4 {
			t.Errorf("write %d at %+v, want page %d offset %d", i, loc, wantPage, wantOff)
		}
	}
	if low.Page != 2 || low.Offset != 0 || low.Version <= got[4].Version {
		t.Errorf("lowttl write at %+v, want a page of its own", low)
	}
}

func TestReadRejectsForgedLocations(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 1))
	loc := mustWrite(t, e, BucketDefault, testRecord(1, 1000))
	e.WaitWrites()
	for _, bad := range []Location{
		{Page: 200, Version: loc.Version, Len: loc.Len},
		{Page: loc.Page, Version: loc.Version + 1, Len: loc.Len},
		{Page: loc.Page, Version: loc.Version, Offset: loc.Offset + 1, Len: loc.Len},
		{Page: loc.Page, Version: loc.Version, Offset: loc.Offset, Len: loc.Len - 1},
		{Page: loc.Page, Version: loc.Version, Offset: tPage - 10, Len: loc.Len},
		{Page: 3, Version: 0, Len: loc.Len},
	} {
		if rec, err := e.Read(bad); err == nil {
			t.Errorf("Read(%+v) = %q, want a miss", bad, rec.Key)
		}
	}
}
