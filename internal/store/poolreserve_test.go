package store

import (
	"fmt"
	"testing"
)

// reserveStore is a manual store of 8 pages on a small flash engine (no
// background loop: nothing is flushed behind the test's back) whose value
// classes have been filled until memory ran out.
func reserveStore(t *testing.T) *Store {
	t.Helper()
	e := openTestEngine(t, 8<<20, 2<<20, 1<<20, nil)
	s := newManualStore(t, Config{MemoryLimit: 8 << 20, Shards: 1, Flash: &FlashConfig{Engine: e, ItemSize: 512}})
	value := make([]byte, 4000)
	for i := range 4000 {
		if s.Set(ModeSet, fmt.Appendf(nil, "v%d", i), 0, 0, value, 0) != Stored {
			t.Fatalf("set v%d failed", i)
		}
	}
	if st := s.Stats(); st.Evictions == 0 {
		t.Fatalf("4000 values of 4000 bytes did not fill 8 MB (no evictions)")
	}
	return s
}

// The value classes leave the pool's last pages to the classes below
// ext_item_size, where flash headers live, as memcached keeps its global
// pool's watermark: filling memory with values evicts values, not the
// headers' room, and the small class then grows into the reserve.
func TestFlashReserveKeepsPagesForHeaders(t *testing.T) {
	s := reserveStore(t)
	want := reservePages(s.slabs.arena.limit())
	if got := s.slabs.arena.poolPages(); got != want {
		t.Fatalf("pool holds %d pages after the values filled memory, want the reserve of %d", got, want)
	}
	// Enough small items (96-byte chunks) for a second page of their class.
	const small = 12000
	for i := range small {
		if s.Set(ModeSet, fmt.Appendf(nil, "h%d", i), 0, 0, []byte("x"), 0) != Stored {
			t.Fatalf("set h%d failed", i)
		}
	}
	id := s.ItemClass(6, 1, 0)
	for _, c := range s.Classes() {
		if c.ID == id && (c.Evicted != 0 || c.TotalPages < 2 || c.Items != small) {
			t.Fatalf("small class %d: %d pages, %d items, %d evicted; want %d items in two pages, none evicted",
				id, c.TotalPages, c.Items, c.Evicted, small)
		}
	}
	checkInvariants(t, s)
}

// Once the small classes have taken the reserve, the automover names the
// value class whose oldest item is oldest to refill it; without a flash
// tier there is no reserve to refill.
func TestReserveSource(t *testing.T) {
	s := reserveStore(t)
	if src := s.reserveSource(); src != 0 {
		t.Fatalf("reserve full, yet reserveSource = %d", src)
	}
	for i := range 12000 {
		s.Set(ModeSet, fmt.Appendf(nil, "h%d", i), 0, 0, []byte("x"), 0)
	}
	src := s.reserveSource()
	if src < s.flash.knobs.load().minClass {
		t.Fatalf("reserve short (pool %d), reserveSource = %d, want a value class", s.slabs.arena.poolPages(), src)
	}
	if r := s.reassign(src, 0, false); r != ReassignOK {
		t.Fatalf("refill from class %d: %v", src, r)
	}
	<-s.mover.done
	if got := s.slabs.arena.poolPages(); got == 0 {
		t.Fatal("the refill gave the pool no page")
	}
	plain := newManualStore(t, Config{MemoryLimit: 8 << 20, Shards: 1})
	if src := plain.reserveSource(); src != 0 {
		t.Fatalf("store without flash: reserveSource = %d", src)
	}
}

// extstore_memory_pressure is the share of pages the header classes hold,
// computed as memcached's extstore automover does: 0 while the automover
// is off.
func TestFlashMemoryPressureStat(t *testing.T) {
	s := reserveStore(t)
	for i := range 12000 {
		s.Set(ModeSet, fmt.Appendf(nil, "h%d", i), 0, 0, []byte("x"), 0)
	}
	if p := s.FlashMemoryPressure(); p != 0 {
		t.Fatalf("pressure %.2f with slab_automove 0, want 0", p)
	}
	s.SetAutomove(1, 0.8, 30)
	low, high := 0, 0
	for _, c := range s.Classes() {
		if c.ChunkSize < 512 {
			low += c.TotalPages
		} else if c.TotalPages > 2 {
			high += c.TotalPages
		}
	}
	want := float64(low) / float64(low+high+s.slabs.arena.poolPages()) * 100
	if p := s.FlashMemoryPressure(); low == 0 || p != want {
		t.Fatalf("pressure %.2f, want %.2f (%d header pages, %d movable value pages)", p, want, low, high)
	}
}
