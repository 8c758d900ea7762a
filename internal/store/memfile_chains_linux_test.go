package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// Chained items, and the chunks a deleted one left, survive a
// warm restart, as restart.t's chunked items do in memcached.
func TestMemoryFileRestoresLargeItems(t *testing.T) {
	cfg := Config{MemoryLimit: 128 << 20, MaxItemSize: 2 << 20, SlabChunkMax: 512 << 10,
		MemoryFile: filepath.Join(t.TempDir(), "items")}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s.Set(ModeSet, fmt.Appendf(nil, "small%d", i), 0, 0, bytes.Repeat([]byte{'s'}, 100<<i), 0)
	}
	n := 0
	for size := 768000; size <= 768000+1024; size += 50 {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "chunk%d", n), 0, 0, bytes.Repeat([]byte{'x'}, size), 0); r != Stored {
			t.Fatalf("chunk%d: %v", n, r)
		}
		n++
	}
	s.Delete(fmt.Appendf(nil, "chunk%d", n-1))
	r := saveAndReopen(t, s, cfg)
	if got := r.Stats().CurrItems; got != uint64(3+n-1) {
		t.Fatalf("%d items restored, want %d: %s", got, 3+n-1, r.RestoreReport())
	}
	checkInvariants(t, r)
}

// A value still arriving when the cache is saved leaves a reserved chain;
// the restore gives its links back.
func TestMemoryFileFreesStrayLinks(t *testing.T) {
	cfg := Config{MemoryLimit: 16 << 20, MaxItemSize: 1 << 20, SlabChunkMax: 4096,
		MemoryFile: filepath.Join(t.TempDir(), "items")}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Set(ModeSet, []byte("kept"), 0, 0, bytes.Repeat([]byte{'k'}, 50_000), 0)
	rv := s.Reserve([]byte("arriving"), 100_000)
	if rv.Lost() {
		t.Fatal("reserve failed")
	}
	r := saveAndReopen(t, s, cfg)
	if v, _, ok := get(r, "kept"); !ok || len(v) != 50_000 {
		t.Fatalf("kept: ok %v, %d bytes (%s)", ok, len(v), r.RestoreReport())
	}
	if err := r.accountChunks(nil); err != nil {
		t.Fatal(err)
	}
}

// saveAndReopen saves s's state, closes it and opens the store again from
// cfg's memory file (closed at the test's end).
func saveAndReopen(t *testing.T, s *Store, cfg Config) *Store {
	t.Helper()
	if err := s.SaveState(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}
