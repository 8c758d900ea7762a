package napi

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func knobsOf(t *testing.T, c *Client, ifindex int) map[uint32]string {
	t.Helper()
	napis, err := c.NAPIs(ifindex)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint32]string{}
	for _, n := range napis {
		out[n.ID] = n.Knobs.String()
	}
	return out
}

func TestApplyRestore(t *testing.T) {
	k := &fakeKernel{napis: vethNAPIs()}
	k.napis[1].Knobs = threeKnobs(Uint32(7), Uint64(3000), Uint64(0)) // a leftover setting to preserve
	c := k.dial(t)
	path := filepath.Join(t.TempDir(), "sub", "napi-srv0.json")
	before := knobsOf(t, c, 2)
	untouched := knobsOf(t, c, 7)

	m, _ := ParseMode("suspend20")
	st, err := Apply(c, "srv0", 2, m.Knobs(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.NAPIs) != 4 {
		t.Fatalf("saved %d NAPIs, want 4", len(st.NAPIs))
	}
	for id, s := range knobsOf(t, c, 2) {
		if s != "defer=100 gro=20000ns suspend=20000000ns" {
			t.Errorf("napi %d after apply: %s", id, s)
		}
	}
	if got := knobsOf(t, c, 7); got[9000] != untouched[9000] {
		t.Errorf("other interface changed: %s", got[9000])
	}
	onDisk, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if onDisk.Interface != "srv0" || onDisk.Ifindex != 2 || len(onDisk.NAPIs) != 4 {
		t.Fatalf("state file %+v", onDisk)
	}

	res, err := Restore(c, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 4 || len(res.Gone) != 0 {
		t.Fatalf("restore result %+v", res)
	}
	after := knobsOf(t, c, 2)
	for id, s := range before {
		if after[id] != s {
			t.Errorf("napi %d restored to %s, want %s", id, after[id], s)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("state file still there after restore: %v", err)
	}
	if _, err := Restore(c, path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second restore: %v, want not-exist", err)
	}
}

// A crash leaves the state file; the next Apply must keep the originals it
// holds rather than save the crashed run's values as "original".
func TestApplyKeepsOriginalsAfterCrash(t *testing.T) {
	k := &fakeKernel{napis: vethNAPIs()}
	c := k.dial(t)
	path := filepath.Join(t.TempDir(), "state.json")
	before := knobsOf(t, c, 2)
	if _, err := Apply(c, "srv0", 2, mustMode(t, "napibusy").Knobs(), path); err != nil {
		t.Fatal(err)
	}
	// No Restore: the server "crashed". The next run applies another mode.
	if _, err := Apply(c, "srv0", 2, mustMode(t, "suspend50").Knobs(), path); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(c, path); err != nil {
		t.Fatal(err)
	}
	after := knobsOf(t, c, 2)
	for id, s := range before {
		if after[id] != s {
			t.Errorf("napi %d: %s after crash+restore, want original %s", id, after[id], s)
		}
	}
}

func TestApplyOnlySavesWhatItChanges(t *testing.T) {
	k := &fakeKernel{napis: vethNAPIs()}
	c := k.dial(t)
	path := filepath.Join(t.TempDir(), "state.json")
	st, err := Apply(c, "srv0", 2, Knobs{GROFlushTimeout: Uint64(10_000)}, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.NAPIs {
		if s.DeferHardIRQs != nil || s.IRQSuspendTimeout != nil || s.GROFlushTimeout == nil {
			t.Fatalf("saved %s for a gro-only change", s.Knobs)
		}
	}
}

func TestApplyErrors(t *testing.T) {
	t.Run("no NAPIs", func(t *testing.T) {
		k := &fakeKernel{napis: vethNAPIs()}
		path := filepath.Join(t.TempDir(), "state.json")
		_, err := Apply(k.dial(t), "lo", 1, mustMode(t, "suspend20").Knobs(), path)
		if !errors.Is(err, ErrNoNAPIs) {
			t.Fatalf("err = %v, want ErrNoNAPIs", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("state file written although nothing was changed")
		}
	})
	t.Run("permission", func(t *testing.T) {
		k := &fakeKernel{napis: vethNAPIs(), deny: true}
		path := filepath.Join(t.TempDir(), "state.json")
		_, err := Apply(k.dial(t), "srv0", 2, mustMode(t, "suspend20").Knobs(), path)
		if !errors.Is(err, ErrPermission) {
			t.Fatalf("err = %v, want ErrPermission", err)
		}
	})
	t.Run("failure midway rolls back", func(t *testing.T) {
		k := &fakeKernel{napis: vethNAPIs(), failSetIDs: map[uint32]bool{8195: true}}
		c := k.dial(t)
		path := filepath.Join(t.TempDir(), "state.json")
		before := knobsOf(t, c, 2)
		if _, err := Apply(c, "srv0", 2, mustMode(t, "suspend20").Knobs(), path); err == nil {
			t.Fatal("apply succeeded")
		}
		if got := knobsOf(t, c, 2); len(got) != 4 || got[8193] != before[8193] || got[8194] != before[8194] {
			t.Fatalf("not rolled back: %v, want %v", got, before)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("state file left after a clean rollback")
		}
	})
	t.Run("empty knobs", func(t *testing.T) {
		k := &fakeKernel{napis: vethNAPIs()}
		if _, err := Apply(k.dial(t), "srv0", 2, Knobs{}, filepath.Join(t.TempDir(), "s")); err == nil {
			t.Fatal("apply of nothing succeeded")
		}
	})
}

func TestRestoreSkipsVanishedNAPIs(t *testing.T) {
	k := &fakeKernel{napis: vethNAPIs()}
	c := k.dial(t)
	path := filepath.Join(t.TempDir(), "state.json")
	if _, err := Apply(c, "srv0", 2, mustMode(t, "defer20").Knobs(), path); err != nil {
		t.Fatal(err)
	}
	k.napis = k.napis[1:] // the device was reset: NAPI 8193 is gone
	res, err := Restore(c, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 3 || len(res.Gone) != 1 || res.Gone[0] != 8193 {
		t.Fatalf("result %+v", res)
	}
}

func TestLoadStateCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(path); err == nil {
		t.Fatal("corrupt state file loaded")
	}
}

func mustMode(t *testing.T, name string) Mode {
	t.Helper()
	m, err := ParseMode(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// threeKnobs are the three IRQ knobs, threaded left alone.
func threeKnobs(deferHardIRQs *uint32, gro, suspend *uint64) Knobs {
	return Knobs{DeferHardIRQs: deferHardIRQs, GROFlushTimeout: gro, IRQSuspendTimeout: suspend}
}
