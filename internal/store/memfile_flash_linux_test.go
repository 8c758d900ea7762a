package store

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/extstore"
)

// warmFlash is a flash tier whose files outlive its engines: each open is
// a start with -e (extstore.Config.Keep), on the same files unless a test
// changes cfg.
type warmFlash struct {
	cfg extstore.Config
}

func newWarmFlash(t *testing.T) *warmFlash {
	cfg := extstore.DefaultConfig(extstore.FileSpec{Path: filepath.Join(t.TempDir(), "ext"), Size: fFile})
	cfg.PageSize, cfg.WbufSize, cfg.TestAlign = fPage, fWbuf, fWbuf
	cfg.Keep = true
	return &warmFlash{cfg: cfg}
}

// open opens an engine on the files, closed at the test's end.
func (w *warmFlash) open(t *testing.T) *extstore.Engine {
	t.Helper()
	e, err := extstore.Open(w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// flashConfigFor is a flash tier on e that moves nothing by itself (the
// tests move items with MoveToFlash) and compacts whenever a page is
// fragmented.
func flashConfigFor(e *extstore.Engine) *FlashConfig {
	return &FlashConfig{Engine: e, ItemSize: 512, ItemAge: math.MaxUint32,
		Policy: extstore.Policy{CompactUnder: 64, MaxFrag: 0.8}}
}

// warmStart is a start with the memory file and, unless e is nil, a flash
// tier; its background loop and compactor are stopped, so the tests drive
// the flash tier alone.
func warmStart(t *testing.T, cfg Config, e *extstore.Engine) *Store {
	t.Helper()
	cfg.Flash = nil
	if e != nil {
		cfg.Flash = flashConfigFor(e)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Close()
	return s
}

// fillFlash stores n items as fillForRestart does and moves every other
// one of at least ext_item_size to flash. It returns what Get sees and
// the keys on flash.
func fillFlash(t *testing.T, s *Store, n int) (map[string]*savedItem, map[string]bool) {
	t.Helper()
	want := fillForRestart(t, s, n)
	onFlash := map[string]bool{}
	for i := range n {
		k := fmt.Sprintf("key-%d", i)
		if w := want[k]; w != nil && len(w.value) >= 512 && i%2 == 0 {
			if !s.MoveToFlash([]byte(k)) {
				t.Fatalf("%s not moved to flash", k)
			}
			onFlash[k] = true
		}
	}
	if len(onFlash) == 0 || flashItems(s) < len(onFlash) {
		t.Fatalf("%d flash headers for %d items moved", flashItems(s), len(onFlash))
	}
	return want, onFlash
}

// compactAll deletes three in four of the flash items and compacts until
// no page is left to, so pages are rescued into, reclaimed and reused.
func compactAll(t *testing.T, s *Store, want map[string]*savedItem, onFlash map[string]bool) {
	t.Helper()
	i := 0
	for k := range onFlash {
		if i++; i%4 != 0 {
			s.Delete([]byte(k))
			delete(want, k)
			delete(onFlash, k)
		}
	}
	// A page is a candidate once its last buffer is on flash; the
	// engine's writer goroutine puts it there.
	e := s.flash.cfg.Engine
	e.WaitWrites()
	if !hasWrittenPage(e) {
		t.Fatal("no page wholly written")
	}
	before := s.FlashStats().CompactRescues
	for range 100 {
		if done, _ := s.compactOnce(); !done {
			break
		}
	}
	if s.FlashStats().CompactRescues == before {
		t.Fatal("compaction rescued nothing")
	}
}

// hasWrittenPage reports whether a page in use is wholly on flash.
func hasWrittenPage(e *extstore.Engine) bool {
	for _, p := range e.Pages(nil) {
		if p.Version != 0 && !p.Active {
			return true
		}
	}
	return false
}

type flashGauges struct{ objects, bytes, pages uint64 }

func gaugesOf(e *extstore.Engine) flashGauges {
	st := e.Stats()
	return flashGauges{st.ObjectsUsed, st.BytesUsed, st.PagesUsed}
}

// TestMemoryFileRestartWithFlash: a graceful stop and a start with the
// same memory file and ext_path serve the items in RAM and those on flash,
// after a compaction before the save and after one since; the engine's
// objects, bytes and pages in use are what they were. (memcached 1.6.45,
// and gocached before, started empty.)
func TestMemoryFileRestartWithFlash(t *testing.T) {
	cfg := memfileConfig(t)
	wf := newWarmFlash(t)
	e := wf.open(t)
	s := warmStart(t, cfg, e)
	want, onFlash := fillFlash(t, s, 600)
	compactAll(t, s, want, onFlash)
	for k := range onFlash { // and some more written since, in a part-written page
		s.Set(ModeSet, []byte(k+"-new"), 7, 0, []byte(strings.Repeat("n", 900)), 0)
		s.MoveToFlash([]byte(k + "-new"))
	}
	want = snapshot(s, 600)
	if err := s.SaveState(); err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	saved := gaugesOf(e)
	e.Close()

	e2 := wf.open(t)
	r := warmStart(t, cfg, e2)
	if rep := r.RestoreReport(); !strings.Contains(rep, fmt.Sprintf("flash: %d items kept", 2*len(onFlash))) {
		t.Errorf("report %q, want %d flash items kept", rep, 2*len(onFlash))
	}
	if w := r.FlashRestoreWarning(); w != "" {
		t.Errorf("warning %q after a clean restore", w)
	}
	if got := gaugesOf(e2); got != saved {
		t.Errorf("engine after the restart %+v, saved with %+v", got, saved)
	}
	sameItems(t, want, snapshot(r, 600))
	for k := range onFlash {
		if v, _, ok := get(r, k+"-new"); !ok || v != strings.Repeat("n", 900) {
			t.Errorf("%s-new after the restart: hit %v, %q", k, ok, v)
		}
	}
	if flashItems(r) != 2*len(onFlash) {
		t.Errorf("%d flash headers after the restart, want %d", flashItems(r), 2*len(onFlash))
	}
	checkInvariants(t, r)

	// The restored pages compact, and the store goes on writing to flash.
	_, more := fillFlash(t, r, 600)
	for k := range more {
		onFlash[k] = true
	}
	want = snapshot(r, 600)
	compactAll(t, r, want, onFlash)
	sameItems(t, want, snapshot(r, 600))
	if fs := r.FlashStats(); fs.MissFromExtstore != 0 || fs.CompactLost != 0 {
		t.Errorf("after the restart %+v", fs)
	}
	checkInvariants(t, r)

	// A restored tier saves and restores again.
	if err := r.SaveState(); err != nil {
		t.Fatalf("second SaveState: %v", err)
	}
	saved = gaugesOf(e2)
	e2.Close()
	e3 := wf.open(t)
	r3 := warmStart(t, cfg, e3)
	if got := gaugesOf(e3); got != saved || flashItems(r3) == 0 {
		t.Errorf("engine after the second restart %+v with %d flash headers, saved with %+v", got, flashItems(r3), saved)
	}
	sameItems(t, want, snapshot(r3, 600))
	checkInvariants(t, r3)
}

// TestMemoryFileFlashCrash: after a start that restored flash items and
// then wrote, compacted and reused pages, a crash (no SaveState) leaves no
// metadata: the next start serves nothing, and the flash files are
// truncated rather than trusted.
func TestMemoryFileFlashCrash(t *testing.T) {
	cfg := memfileConfig(t)
	wf := newWarmFlash(t)
	e := wf.open(t)
	s := warmStart(t, cfg, e)
	fillFlash(t, s, 600)
	if err := s.SaveState(); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e2 := wf.open(t)
	r := warmStart(t, cfg, e2)
	want, onFlash := fillFlash(t, r, 600) // other values on the same keys
	compactAll(t, r, want, onFlash)
	e2.Close() // killed: no SaveState

	e3 := wf.open(t)
	c := warmStart(t, cfg, e3)
	if got := snapshot(c, 600); len(got) != 0 {
		t.Errorf("%d items served after a crash", len(got))
	}
	if rep := c.RestoreReport(); !strings.Contains(rep, "starting empty") {
		t.Errorf("report %q, want an empty start", rep)
	}
	if g := gaugesOf(e3); g != (flashGauges{}) {
		t.Errorf("engine after the crash %+v, want empty", g)
	}
	if fi, err := os.Stat(wf.cfg.Files[0].Path); err != nil || fi.Size() != 0 {
		t.Errorf("flash file after the crash: %v, %v; want truncated", fi.Size(), err)
	}
}
