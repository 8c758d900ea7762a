package extstore

import (
	"errors"
	"testing"
)

// writePage0 fills page 0 and waits until it is written out; it returns
// the locations of its records.
func writePage0(t *testing.T, e *Engine) []Location {
	t.Helper()
	var locs []Location
	for i := 0; len(locs) == 0 || locs[len(locs)-1].Page == 0; i++ {
		locs = append(locs, mustWrite(t, e, BucketDefault, testRecord(i, 1000+i*997%9000)))
	}
	e.WaitWrites()
	return locs[:len(locs)-1]
}

// A scan holds its page only while it reads a buffer, as memcached's
// compactor does: a Delete from fn of the page's last live record frees
// the page at once (a compactor's rescue can then be written to it), and
// the scan ends with ErrStale at its next read.
func TestScanLetsDeleteFreePage(t *testing.T) {
	cfg, _ := faultConfig(t.TempDir(), 1)
	e := openEngine(t, cfg)
	locs := writePage0(t, e)
	for _, l := range locs[1:] {
		e.Delete(l)
	}
	free := e.Stats().PagesFree
	freedInScan := false
	err := e.ScanPage(0, locs[0].Version, func(loc Location, _ Record) bool {
		if loc == locs[0] {
			e.Delete(loc)
			freedInScan = e.Stats().PagesFree == free+1
		}
		return true
	})
	if !freedInScan {
		t.Fatal("deleting the page's last live record during a scan did not free it")
	}
	if !errors.Is(err, ErrStale) && err != nil {
		t.Fatalf("scan of a page freed under it: %v", err)
	}
}

// Undelete takes a Delete back while the page lives, and counts nothing
// once the Delete freed the page.
func TestUndelete(t *testing.T) {
	cfg, _ := faultConfig(t.TempDir(), 1)
	e := openEngine(t, cfg)
	locs := writePage0(t, e)
	used := e.Stats().ObjectsUsed
	e.Delete(locs[0])
	if !e.Undelete(locs[0]) || e.Stats().ObjectsUsed != used {
		t.Fatalf("undelete on a live page: objects used %d, want %d", e.Stats().ObjectsUsed, used)
	}
	for _, l := range locs {
		e.Delete(l)
	}
	if e.Check(locs[0]) {
		t.Fatal("page still live with every record deleted")
	}
	st := e.Stats()
	if e.Undelete(locs[0]) || e.Stats().ObjectsUsed != st.ObjectsUsed {
		t.Fatal("undelete counted a record of a freed page")
	}
}

// Each buffer a scan reads counts as one object read of a write buffer's
// bytes, as memcached counts its compactor's reads.
func TestScanCountsReads(t *testing.T) {
	cfg, _ := faultConfig(t.TempDir(), 1)
	e := openEngine(t, cfg)
	locs := writePage0(t, e)
	before := e.Stats()
	if err := e.ScanPage(0, locs[0].Version, func(Location, Record) bool { return true }); err != nil {
		t.Fatal(err)
	}
	after := e.Stats()
	bufs := e.PageSize() / e.WbufSize()
	if got := after.ObjectsRead - before.ObjectsRead; got != bufs {
		t.Fatalf("scan of a page counted %d object reads, want %d", got, bufs)
	}
	if got := after.BytesRead - before.BytesRead; got != bufs*e.WbufSize() {
		t.Fatalf("scan of a page counted %d bytes read, want %d", got, bufs*e.WbufSize())
	}
}
