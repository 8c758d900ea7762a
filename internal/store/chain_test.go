package store

import (
	"bytes"
	"fmt"
	"testing"
)

// Items larger than slab_chunk_max are chains of the largest class's
// chunks: every way a value goes in (whole, reserved in pieces, appended,
// prepended) and out (Get, CopyValue in pieces, Item) gives it back byte
// for byte, and its chunks go back whole when it goes.
func TestChainedItems(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 16 << 20, MaxItemSize: 1 << 20, SlabChunkMax: 4096})
	c := s.slabs.largest()
	if c.size != 4096 {
		t.Fatalf("largest chunk %d, want 4096", c.size)
	}
	values := map[string][]byte{}
	for i, n := range []int{4000, 4096, 11000, 100_000, 1 << 19, (1 << 20) - 300} {
		k := fmt.Sprintf("k%d", i)
		v := makeValue(uint64(i), n)
		if r := s.Set(ModeSet, []byte(k), 7, 0, v, 0); r != Stored {
			t.Fatalf("%s (%d bytes): %v", k, n, r)
		}
		values[k] = v
	}
	// In pieces into a reservation, then appended and prepended to.
	v := makeValue(77, 300_000)
	rv := s.Reserve([]byte("res"), len(v))
	for off := 0; off < len(v); off += 7000 {
		if !s.FillReserved(&rv, off, v[off:min(off+7000, len(v))]) {
			t.Fatalf("fill at %d refused", off)
		}
	}
	if r, _ := s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: []byte("res")}); r != Stored {
		t.Fatalf("commit: %v", r)
	}
	values["res"] = v
	tail := bytes.Repeat([]byte("t"), 9000)
	s.Set(ModeAppend, []byte("res"), 0, 0, tail, 0)
	values["res"] = append(append([]byte(nil), v...), tail...)
	s.Set(ModePrepend, []byte("k0"), 0, 0, tail, 0)
	values["k0"] = append(append([]byte(nil), tail...), values["k0"]...)
	for k, want := range values {
		got, _, ok := get(s, k)
		if !ok || got != string(want) {
			t.Fatalf("%s: ok %v, %d bytes, want %d", k, ok, len(got), len(want))
		}
		var ref ValueRef
		s.Get([]byte(k), func(v []byte, _ Meta) { ref = s.RefOf([]byte(k), v) })
		if piece, ok := copyAll(s, ref, 5000); !ok || !bytes.Equal(piece, want) {
			t.Fatalf("%s: CopyValue in pieces: ok %v", k, ok)
		}
		s.ReleaseRef(ref)
		s.View([]byte(k), func(it Item) {
			if it.ValueLen() != len(want) || !bytes.Equal(it.AppendValue(nil), want) || !bytes.HasPrefix(want, it.ValueHead()) {
				t.Errorf("%s: Item disagrees", k)
			}
		})
	}
	checkInvariants(t, s)
	if err := s.accountChunks(nil); err != nil {
		t.Fatal(err)
	}
	// A 1 MB value takes 1 MB / 4048 links and its head, all of class c.
	c.mu.Lock()
	used := c.pages*c.perPage - c.freeChunks()
	c.mu.Unlock()
	for k := range values {
		s.Delete([]byte(k))
	}
	c.mu.Lock()
	after := c.pages*c.perPage - c.freeChunks()
	c.mu.Unlock()
	if used < 256 || after != 0 {
		t.Fatalf("largest class: %d chunks used, %d after deleting everything", used, after)
	}
	if err := s.accountChunks(nil); err != nil {
		t.Fatal(err)
	}
}

// A chained item's chunks are evicted together and the class turns over
// without losing any.
func TestChainedItemsEvict(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20, MaxItemSize: 1 << 20, SlabChunkMax: 16 << 10})
	for i := range 300 {
		v := makeValue(uint64(i), 20_000+i*97)
		if r := s.Set(ModeSet, fmt.Appendf(nil, "c%d", i), 0, 0, v, 0); r != Stored {
			t.Fatalf("c%d: %v", i, r)
		}
	}
	if s.Stats().Evictions == 0 {
		t.Fatal("nothing was evicted")
	}
	for i := range 300 {
		if v, _, ok := get(s, fmt.Sprintf("c%d", i)); ok && checkValue([]byte(v)) != nil {
			t.Fatalf("c%d: %v", i, checkValue([]byte(v)))
		}
	}
	checkInvariants(t, s)
	if err := s.accountChunks(nil); err != nil {
		t.Fatal(err)
	}
}
