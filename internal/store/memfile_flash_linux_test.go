package store

import (
	"os"
	"strings"
	"testing"
)

// TestMemoryFileWithFlashStartsEmpty: with a flash tier the saved cache is
// not restored, as memcached 1.6.45 refuses ("memory restart with
// extstore not presently supported") and starts empty: the RAM headers of
// flash items point at pages the new engine no longer holds.
func TestMemoryFileWithFlashStartsEmpty(t *testing.T) {
	cfg := memfileConfig(t)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(fillForRestart(t, s, 500)) == 0 {
		t.Fatal("nothing stored")
	}
	if err := s.SaveState(); err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	s.Close()

	cfg.Flash = &FlashConfig{Engine: openFlash(t).e, ItemSize: 512, ItemAge: 10}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.RestartLines(); len(got) != 1 || got[0] != restartNoExtstore {
		t.Errorf("restart lines %q, want memcached's %q", got, restartNoExtstore)
	}
	if rep := r.RestoreReport(); !strings.Contains(rep, "starting empty") {
		t.Errorf("report %q, want an empty start", rep)
	}
	if n := r.Stats().CurrItems; n != 0 {
		t.Errorf("curr_items %d after the start, want 0", n)
	}
	if _, err := os.Stat(metaPath(cfg.MemoryFile)); !os.IsNotExist(err) {
		t.Errorf("metadata still there (%v): a later crash could pass for a saved stop", err)
	}
}
