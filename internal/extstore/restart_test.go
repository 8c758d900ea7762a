package extstore

import (
	"os"
	"testing"
	"time"
)

// savedEngine writes n quarter-page records to the default bucket and one
// to lowttl (so two pages are left part written), deletes every third,
// saves and closes. It returns the live locations and their records.
func savedEngine(t *testing.T, cfg Config, n int) (State, []Location, []Record, Stats) {
	t.Helper()
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var locs []Location
	var recs []Record
	for i := range n {
		rec := quarterPage(i)
		loc := mustWrite(t, e, BucketDefault, rec)
		if i%3 == 2 {
			e.Delete(loc)
			continue
		}
		locs, recs = append(locs, loc), append(recs, rec)
	}
	low := testRecord(1000, 500)
	locs, recs = append(locs, mustWrite(t, e, BucketLowTTL, low)), append(recs, low)
	st, err := e.Save()
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	stats := e.Stats()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return st, locs, recs, stats
}

func keepConfig(cfg Config) Config {
	cfg.Keep = true
	return cfg
}

// A restored engine reads back every location it handed out before the
// save, has the same objects, bytes and pages in use, and goes on writing
// its part-written pages after what they hold.
func TestSaveRestoreRoundTrip(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 2)
	st, locs, recs, before := savedEngine(t, cfg, 10)

	e := openEngine(t, keepConfig(cfg))
	if err := e.Restore(st); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	for _, loc := range locs {
		if !e.Adopt(loc) {
			t.Fatalf("Adopt(%+v) refused", loc)
		}
	}
	e.Settle()
	after := e.Stats()
	if after.ObjectsUsed != before.ObjectsUsed || after.BytesUsed != before.BytesUsed || after.PagesUsed != before.PagesUsed {
		t.Errorf("after restore objects %d bytes %d pages %d; saved with %d, %d, %d", after.ObjectsUsed,
			after.BytesUsed, after.PagesUsed, before.ObjectsUsed, before.BytesUsed, before.PagesUsed)
	}
	for i, loc := range locs {
		got, err := e.Read(loc)
		if err != nil || !sameRecord(got, recs[i]) {
			t.Fatalf("Read(%+v) = %q, %v; want %q", loc, got.Key, err, recs[i].Key)
		}
	}
	low := locs[len(locs)-1]
	next := mustWrite(t, e, BucketLowTTL, testRecord(2000, 500))
	if next.Page != low.Page || next.Version != low.Version || uint64(next.Offset) < tWbuf {
		t.Errorf("lowttl write after restore at %+v, want its page %d after the saved buffer", next, low.Page)
	}
	fresh := mustWrite(t, e, BucketCompact, testRecord(2001, 500))
	if fresh.Version < st.NextVersion {
		t.Errorf("new page version %d, saved versions ran to %d", fresh.Version, st.NextVersion)
	}
	e.WaitWrites()
	if got, err := e.Read(low); err != nil || !sameRecord(got, recs[len(recs)-1]) {
		t.Errorf("saved lowttl record after more writes to its page: %q, %v", got.Key, err)
	}
}

// Pages no adopted location points at are free after Settle, and a
// location the restored pages do not hold is refused.
func TestRestoreFreesUnadoptedPages(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 1)
	st, locs, _, _ := savedEngine(t, cfg, 8) // pages 0 and 1 full, lowttl part written
	e := openEngine(t, keepConfig(cfg))
	if err := e.Restore(st); err != nil {
		t.Fatal(err)
	}
	var kept []Location
	for _, loc := range locs {
		if loc.Page != 0 {
			kept = append(kept, loc)
			e.Adopt(loc)
		}
	}
	stale := locs[0]
	stale.Version++
	if e.Adopt(stale) {
		t.Error("Adopt took a location of another version")
	}
	e.Settle()
	if _, err := e.Read(locs[0]); err == nil {
		t.Error("a page no header held still reads")
	}
	if s := e.Stats(); s.PagesUsed != 2 || s.ObjectsUsed != uint64(len(kept)) || s.PageReclaims != 0 {
		t.Errorf("pages used %d objects %d reclaims %d; want 2, %d, 0", s.PagesUsed, s.ObjectsUsed, s.PageReclaims, len(kept))
	}
}

// A State of other files or sizes, of files changed since, or one that
// does not parse is refused and leaves every page free.
func TestRestoreRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, cfg *Config, st *State)
	}{
		{"page size", func(t *testing.T, cfg *Config, st *State) { cfg.PageSize, cfg.Files[0].Size = 2*tPage, 2*tFile }},
		{"file list", func(t *testing.T, cfg *Config, st *State) { cfg.Files = cfg.Files[:1] }},
		{"file order", func(t *testing.T, cfg *Config, st *State) { cfg.Files[0], cfg.Files[1] = cfg.Files[1], cfg.Files[0] }},
		{"file size", func(t *testing.T, cfg *Config, st *State) { cfg.Files[1].Size = 2 * tFile }},
		{"file bucket", func(t *testing.T, cfg *Config, st *State) { cfg.Files[1].FreeBucket = BucketLowTTL }},
		{"file written to", func(t *testing.T, cfg *Config, st *State) {
			f, err := os.OpenFile(cfg.Files[0].Path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("x"), 100); err != nil {
				t.Fatal(err)
			}
			future := time.Unix(0, st.Files[0].Modified).Add(time.Second)
			if err := os.Chtimes(cfg.Files[0].Path, future, future); err != nil {
				t.Fatal(err)
			}
		}},
		{"file truncated", func(t *testing.T, cfg *Config, st *State) {
			if err := os.Truncate(cfg.Files[1].Path, 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"duplicate page", func(t *testing.T, cfg *Config, st *State) { st.Pages = append(st.Pages, st.Pages[0]) }},
		{"version ahead", func(t *testing.T, cfg *Config, st *State) { st.Pages[0].Version = st.NextVersion }},
		{"odd length", func(t *testing.T, cfg *Config, st *State) { st.Pages[0].Written = tWbuf + 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := smallConfig(t.TempDir(), 2)
			st, locs, _, _ := savedEngine(t, cfg, 10)
			tt.change(t, &cfg, &st)
			e := openEngine(t, keepConfig(cfg))
			if err := e.Restore(st); err == nil {
				t.Fatal("Restore accepted it")
			}
			if e.Adopt(locs[0]) {
				t.Error("a refused restore still adopts locations")
			}
			if s := e.Stats(); s.PagesFree != s.PageCount {
				t.Errorf("%d of %d pages free after a refused restore", s.PagesFree, s.PageCount)
			}
		})
	}
}

// Discard truncates the kept files and starts the pages over, after a
// restore too; without Keep, Open truncates.
func TestDiscardAndOpenTruncate(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 1)
	st, locs, _, _ := savedEngine(t, cfg, 6)
	size := func() int64 {
		fi, err := os.Stat(cfg.Files[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if size() == 0 {
		t.Fatal("nothing written")
	}
	e := openEngine(t, keepConfig(cfg))
	if size() == 0 {
		t.Fatal("Open with Keep truncated the file")
	}
	if err := e.Restore(st); err != nil {
		t.Fatal(err)
	}
	e.Adopt(locs[0])
	if err := e.Discard(); err != nil {
		t.Fatal(err)
	}
	if n := size(); n != 0 {
		t.Errorf("file of %d bytes after Discard", n)
	}
	if _, err := e.Read(locs[0]); err == nil {
		t.Error("a discarded location still reads")
	}
	if s := e.Stats(); s.PagesFree != s.PageCount || s.ObjectsUsed != 0 {
		t.Errorf("after Discard %d of %d pages free, %d objects", s.PagesFree, s.PageCount, s.ObjectsUsed)
	}
	loc := mustWrite(t, e, BucketDefault, testRecord(1, 100))
	if loc.Page != 0 || loc.Version != 1 {
		t.Errorf("first write after Discard at %+v, want page 0 version 1", loc)
	}
	e.WaitWrites()
	mustWrite(t, e, BucketDefault, quarterPage(2))
	if _, err := e.Save(); err != nil {
		t.Fatal(err)
	}
	e.Close()
	if size() == 0 {
		t.Fatal("nothing written after Discard")
	}
	openEngine(t, cfg)
	if n := size(); n != 0 {
		t.Errorf("Open without Keep left %d bytes", n)
	}
}
