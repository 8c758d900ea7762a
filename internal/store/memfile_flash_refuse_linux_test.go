package store

import (
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/extstore"
)

// TestMemoryFileFlashChanged: a restart whose flash tier is not the one
// saved (other ext_path files or sizes, files written since, none at all)
// keeps the items in RAM and drops those whose values were on flash, with
// a warning that says why; none is ever served from the pages.
func TestMemoryFileFlashChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, wf *warmFlash) // nil wf.cfg.Files: no ext_path
		why    string
	}{
		{"file size", func(t *testing.T, wf *warmFlash) { wf.cfg.Files[0].Size = 2 * fFile }, "ext_path 1 was"},
		{"page size", func(t *testing.T, wf *warmFlash) { wf.cfg.PageSize = 2 * fPage }, "ext_page_size"},
		{"file added", func(t *testing.T, wf *warmFlash) {
			wf.cfg.Files = append(wf.cfg.Files, extstore.FileSpec{Path: wf.cfg.Files[0].Path + "2", Size: fFile})
		}, "1 ext_path files, now 2"},
		{"file bucket", func(t *testing.T, wf *warmFlash) { wf.cfg.Files[0].FreeBucket = extstore.BucketCompact }, "ext_path 1 was"},
		{"written since", func(t *testing.T, wf *warmFlash) {
			// A start without -e on the same file: truncated, written.
			cold := *wf
			cold.cfg.Keep = false
			e := cold.open(t)
			s := warmStart(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 64 << 10}, e)
			fillFlash(t, s, 600)
			if _, err := e.Save(); err != nil {
				t.Fatal(err)
			}
			e.Close()
		}, "changed since the save"},
		{"no ext_path", func(t *testing.T, wf *warmFlash) { wf.cfg.Files = nil }, "no ext_path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := memfileConfig(t)
			wf := newWarmFlash(t)
			e := wf.open(t)
			s := warmStart(t, cfg, e)
			want, onFlash := fillFlash(t, s, 600)
			if err := s.SaveState(); err != nil {
				t.Fatal(err)
			}
			e.Close()

			tt.change(t, wf)
			var e2 *extstore.Engine
			if wf.cfg.Files != nil {
				e2 = wf.open(t)
			}
			r := warmStart(t, cfg, e2)
			got := snapshot(r, 600)
			for k := range onFlash {
				if g := got[k]; g != nil {
					t.Errorf("%s served (%d bytes) from a flash tier that changed", k, len(g.value))
				}
				delete(want, k)
			}
			sameItems(t, want, got)
			if w := r.FlashRestoreWarning(); !strings.Contains(w, tt.why) || !strings.Contains(w, "dropped") {
				t.Errorf("warning %q, want one that says %q", w, tt.why)
			}
			if e2 != nil && gaugesOf(e2) != (flashGauges{}) {
				t.Errorf("engine %+v after dropping the flash items, want empty", gaugesOf(e2))
			}
			if flashItems(r) != 0 {
				t.Errorf("%d flash headers left", flashItems(r))
			}
			checkInvariants(t, r)
		})
	}
}

// TestMemoryFileFlashAdded: a cache saved without a flash tier comes back
// whole when ext_path is given at the restart, and the new tier starts
// empty.
func TestMemoryFileFlashAdded(t *testing.T) {
	cfg := memfileConfig(t)
	s := warmStart(t, cfg, nil)
	want := fillForRestart(t, s, 600)
	if err := s.SaveState(); err != nil {
		t.Fatal(err)
	}
	e := newWarmFlash(t).open(t)
	r := warmStart(t, cfg, e)
	sameItems(t, want, snapshot(r, 600))
	if w := r.FlashRestoreWarning(); w != "" {
		t.Errorf("warning %q with no flash items saved", w)
	}
	if !r.MoveToFlash([]byte("key-1")) {
		t.Fatal("the new flash tier takes no item")
	}
	if v, _, ok := get(r, "key-1"); !ok || v != string(want["key-1"].value) {
		t.Errorf("key-1 from the new flash tier: %v, %d bytes", ok, len(v))
	}
}
