//go:build linux

package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type savedItem struct {
	value []byte
	flags uint32
	cas   uint64
}

func memfileConfig(t *testing.T) Config {
	return Config{MemoryLimit: 8 << 20, MaxItemSize: 64 << 10, MemoryFile: filepath.Join(t.TempDir(), "items")}
}

// fillForRestart stores n items of varied sizes, overwrites some, deletes
// some, and returns what Get sees afterwards for every key it touched.
func fillForRestart(t *testing.T, s *Store, n int) map[string]*savedItem {
	t.Helper()
	for i := range n {
		k := fmt.Sprintf("key-%d", i)
		v := bytes.Repeat([]byte{byte('a' + i%26)}, 1+(i*37)%3000)
		s.Set(ModeSet, []byte(k), uint32(i), 0, v, 0)
		if i%7 == 0 {
			s.Set(ModeSet, []byte(k), uint32(i+1), 0, append(v, '!'), 0)
		}
		if i%11 == 0 {
			s.Delete([]byte(k))
		}
	}
	return snapshot(s, n)
}

func snapshot(s *Store, n int) map[string]*savedItem {
	got := map[string]*savedItem{}
	for i := range n {
		k := fmt.Sprintf("key-%d", i)
		s.Get([]byte(k), func(v []byte, m Meta) {
			got[k] = &savedItem{value: bytes.Clone(v), flags: m.Flags, cas: m.CAS}
		})
	}
	return got
}

func sameItems(t *testing.T, want, got map[string]*savedItem) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d items after the restart, want %d", len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s lost", k)
		case !bytes.Equal(g.value, w.value) || g.flags != w.flags || g.cas != w.cas:
			t.Errorf("%s: got %d bytes flags %d cas %d, want %d bytes flags %d cas %d",
				k, len(g.value), g.flags, g.cas, len(w.value), w.flags, w.cas)
		}
	}
}

// TestMemoryFileRestart: a graceful stop (SaveState) and a start with the
// same file and settings serve every item, with its flags and CAS, and the
// store keeps working (new items, overwrites, eviction) afterwards.
func TestMemoryFileRestart(t *testing.T) {
	for _, n := range []int{3000, 20000} { // all fit; rings wrapped and evicting
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			cfg := memfileConfig(t)
			cfg.Started = 1_700_000_000
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := fillForRestart(t, s, n)
			if len(want) == 0 {
				t.Fatal("nothing stored")
			}
			if err := s.SaveState(); err != nil {
				t.Fatalf("SaveState: %v", err)
			}
			s.Close()

			cfg.Started = 1_700_000_500
			r, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.Started(); got != 1_700_000_000 {
				t.Errorf("Started() = %d after the restart, want the first start, 1700000000 (memcached's process_started)", got)
			}
			if rep := r.RestoreReport(); !strings.Contains(rep, fmt.Sprintf("restored %d items", len(want))) {
				t.Errorf("report %q, want %d items restored", rep, len(want))
			}
			if st := r.Stats(); st.TotalItems != st.CurrItems || st.CurrItems != uint64(len(want)) {
				t.Errorf("after the restart total_items %d, curr_items %d; want both %d, as memcached counts the items it links again",
					st.TotalItems, st.CurrItems, len(want))
			}
			sameItems(t, want, snapshot(r, n))
			if _, err := os.Stat(metaPath(cfg.MemoryFile)); !os.IsNotExist(err) {
				t.Errorf("metadata still there after the start: %v", err)
			}
			// The restored store goes on: a new CAS is unique, eviction runs.
			var before uint64
			r.Get([]byte("key-1"), func(_ []byte, m Meta) { before = m.CAS })
			r.Set(ModeSet, []byte("key-1"), 0, 0, []byte("new"), 0)
			r.Get([]byte("key-1"), func(v []byte, m Meta) {
				if string(v) != "new" || m.CAS <= before {
					t.Errorf("after the restart: key-1 = %q cas %d, want new with cas > %d", v, m.CAS, before)
				}
			})
			for i := range 3 * n {
				r.Set(ModeSet, []byte(fmt.Sprintf("more-%d", i)), 0, 0, make([]byte, 500), 0)
			}
			if !r.Get([]byte(fmt.Sprintf("more-%d", 3*n-1)), func([]byte, Meta) {}) {
				t.Error("the newest item is missing after filling the restored store")
			}
		})
	}
}

// TestMemoryFileCrashStartsEmpty: without SaveState (a crash, SIGKILL) the
// next start trusts nothing in the file.
func TestMemoryFileCrashStartsEmpty(t *testing.T) {
	cfg := memfileConfig(t)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fillForRestart(t, s, 2000)
	s.Close() // no SaveState
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := snapshot(r, 2000); len(got) != 0 {
		t.Errorf("%d items after a crash, want none", len(got))
	}
	if rep := r.RestoreReport(); !strings.Contains(rep, "starting empty") {
		t.Errorf("report %q, want it to say it starts empty", rep)
	}
}

// TestMemoryFileCorruptMetadataRefused: an empty or unparsable FILE.meta
// makes New fail, as memcached aborts on it (restart.t 1).
func TestMemoryFileCorruptMetadataRefused(t *testing.T) {
	for _, meta := range []string{"", "{", "garbage\n"} {
		cfg := memfileConfig(t)
		if err := os.WriteFile(metaPath(cfg.MemoryFile), []byte(meta), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := New(cfg)
		if err == nil {
			s.Close()
			t.Fatalf("metadata %q: New succeeded, want it to refuse", meta)
		}
		if !strings.Contains(err.Error(), "corrupt metadata") {
			t.Errorf("metadata %q: error %q", meta, err)
		}
	}
}

// TestMemoryFileTornStartsEmpty: metadata that no longer matches the file
// (the file changed after the save, or other settings) is refused.
func TestMemoryFileTornStartsEmpty(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, cfg *Config)
		reason string
	}{
		{"file changed after the save", func(t *testing.T, cfg *Config) {
			f, err := os.OpenFile(cfg.MemoryFile, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("torn"), 100); err != nil {
				t.Fatal(err)
			}
		}, "checksum"},
		{"other -I", func(t *testing.T, cfg *Config) { cfg.MaxItemSize = 32 << 10 }, "-I"},
		{"other -m", func(t *testing.T, cfg *Config) { cfg.MemoryLimit = 16 << 20 }, "-m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := memfileConfig(t)
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			fillForRestart(t, s, 2000)
			if err := s.SaveState(); err != nil {
				t.Fatal(err)
			}
			s.Close()
			tt.damage(t, &cfg)
			r, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := snapshot(r, 2000); len(got) != 0 {
				t.Errorf("%d items restored, want none", len(got))
			}
			if rep := r.RestoreReport(); !strings.Contains(rep, "starting empty") || !strings.Contains(rep, tt.reason) {
				t.Errorf("report %q, want it to start empty because of %q", rep, tt.reason)
			}
			// Empty, but fully usable.
			r.Set(ModeSet, []byte("k"), 0, 0, []byte("v"), 0)
			if !r.Get([]byte("k"), func([]byte, Meta) {}) {
				t.Error("store unusable after refusing the file")
			}
		})
	}
}

// TestMemoryFileSavedAfterLimitChange: cache_memlimit changes how many
// pages the classes may take, not where they are, so the save after it
// still restores everything.
func TestMemoryFileSavedAfterLimitChange(t *testing.T) {
	cfg := memfileConfig(t)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fillForRestart(t, s, 500)
	want := snapshot(s, 500)
	if err := s.SetMemoryLimit(cfg.MemoryLimit / 2); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(); err != nil {
		t.Fatalf("SaveState after a limit change: %v", err)
	}
	s.Close()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := snapshot(r, 500); len(got) != len(want) {
		t.Errorf("%d items restored, want %d (%s)", len(got), len(want), r.RestoreReport())
	}
}

// restart.t: the hash power level reached before a graceful stop is kept,
// and flushed items saved unmet stay flushed, as memcached saves its
// hashpower and oldest_live/oldest_cas with the memory file.
func TestMemoryFileKeepsHashPowerAndFlush(t *testing.T) {
	cfg := memfileConfig(t)
	cfg.HashPower = 12
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7000 {
		set(s, fmt.Sprint("k", i), "v")
	}
	s.hashExpand()
	s.FlushAll(0)
	set(s, "after", "v")
	if err := s.SaveState(); err != nil {
		t.Fatal(err)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Stats().HashPowerLevel; got != 13 {
		t.Errorf("hash_power_level %d after the restart, want 13", got)
	}
	if _, _, ok := get(r, "k1"); ok {
		t.Error("a flushed item came back after the restart")
	}
	if _, _, ok := get(r, "after"); !ok {
		t.Error("an item stored after the flush is gone after the restart")
	}
}

// TestMemoryFileRestartLines: every start with a memory file has
// memcached's stderr verdict on it: none for a restore, its "no metadata"
// line for a first start or one after a stop that saved nothing, and for a
// changed setting the key and saved value memcached's metadata names, with
// its two lines after.
func TestMemoryFileRestartLines(t *testing.T) {
	changed := func(key, old string) []string {
		return []string{"[restart] restart incompatible due to setting for [" + key + "] [old value: " + old + "]",
			"[restart] missing some metadata lines",
			"[restart] failed to validate metadata, starting with a clean cache"}
	}
	noMeta := []string{"[restart] no metadata save file, starting with a clean cache"}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   []string
	}{
		{"same", func(*Config) {}, nil},
		{"-m", func(c *Config) { c.MemoryLimit = 16 << 20 }, changed("maxbytes", "8388608")},
		{"-I", func(c *Config) { c.MaxItemSize = 128 << 10 }, changed("item_size_max", "65536")},
		{"-C", func(c *Config) { c.DisableCAS = true }, changed("use_cas", "true")},
		{"-f", func(c *Config) { c.GrowthFactor = 1.5 }, changed("slab_config", "1.25")},
		{"-n", func(c *Config) { c.MinChunk = 64 }, changed("chunk_size", "48")},
		{"-f and -m", func(c *Config) { c.GrowthFactor, c.MemoryLimit = 2, 16<<20 }, changed("slab_config", "1.25")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := memfileConfig(t)
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.RestartLines(); !slices.Equal(got, noMeta) {
				t.Errorf("first start: %q, want %q", got, noMeta)
			}
			fillForRestart(t, s, 100)
			if err := s.SaveState(); err != nil {
				t.Fatal(err)
			}
			s.Close()
			next := cfg
			tc.change(&next)
			r, err := New(next)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.RestartLines(); !slices.Equal(got, tc.want) {
				t.Errorf("restart: %q, want %q", got, tc.want)
			}
			r.Close()
			// That start removed the metadata: the next has none.
			r, err = New(next)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.RestartLines(); !slices.Equal(got, noMeta) {
				t.Errorf("start after one that saved nothing: %q, want %q", got, noMeta)
			}
		})
	}
}

// TestMemoryFileFailedRestoreCountsNothing: a restore that fails partway
// (here the last ring's records do not parse, after the first rings were
// linked again) starts empty, and so does total_items: memcached starts
// with a clean cache and counts nothing it did not keep.
func TestMemoryFileFailedRestoreCountsNothing(t *testing.T) {
	cfg := memfileConfig(t)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fillForRestart(t, s, 3000)
	if err := s.SaveState(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(metaPath(cfg.MemoryFile))
	if err != nil {
		t.Fatal(err)
	}
	var m memfileMeta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Front < 2 {
		t.Fatalf("%d pages: none is linked before the broken one", m.Front)
	}
	// The last page's owner no longer parses; the checksum still holds.
	m.Owners[m.Front-1] = 0x7f
	if b, err = json.Marshal(&m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(metaPath(cfg.MemoryFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if rep := r.RestoreReport(); !strings.Contains(rep, "starting empty") {
		t.Fatalf("report %q: the broken ring was restored", rep)
	}
	if st := r.Stats(); st.CurrItems != 0 || st.TotalItems != 0 {
		t.Errorf("after a failed restore curr_items %d, total_items %d; want 0 and 0", st.CurrItems, st.TotalItems)
	}
}
