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

// pressureStore is a manual store of 8 pages on a small flash engine
// (ext_item_size 512) holding values 4000-byte values, each in a chunk of
// 4,544 bytes (230 to a 1 MiB page), and small 1-byte values, each in a
// chunk of 96 bytes (10,922 to a page).
func pressureStore(t *testing.T, values, small int) *Store {
	t.Helper()
	e := openTestEngine(t, 8<<20, 2<<20, 1<<20, nil)
	s := newManualStore(t, Config{MemoryLimit: 8 << 20, Shards: 1, Flash: &FlashConfig{Engine: e, ItemSize: 512}})
	value := make([]byte, 4000)
	for i := range values {
		s.Set(ModeSet, fmt.Appendf(nil, "v%d", i), 0, 0, value, 0)
	}
	for i := range small {
		if s.Set(ModeSet, fmt.Appendf(nil, "h%d", i), 0, 0, []byte("x"), 0) != Stored {
			t.Fatalf("set h%d failed", i)
		}
	}
	return s
}

// extstore_memory_pressure, by memcached's definition (its extstore
// automover, slab_automove_extstore.c): low = pages of the classes whose
// chunks are smaller than ext_item_size, where headers live; high = pages
// of the other classes, counting only a class with more than two pages
// (MIN_PAGES_FOR_SOURCE: the ones it may take a page from); pool = pages
// in the global page pool. With a flash tier the pool starts with every
// page the limit allows (memcached's slabs_prefill_global, arena.prefill
// here), so pool = 8 - pages the classes took. The stat is
// low / (low + high + pool) * 100, shown with two decimals, and stays 0
// while the automover is off. The expected values are worked out by hand
// from the layouts:
//   - 4000 values fill the 8 pages: the value class takes 6, two stay in
//     the pool as the headers' reserve; no small class: 0 / 8.
//   - and 6000 small items, one page of the reserve: 1 / (1+6+1) = 12.50.
//   - and 12000, two pages: 2 / (2+6+0) = 25.00.
//   - 400 values (two pages: not a source, left out of high) and one small
//     item: 1 / (1+0+5) = 16.67 (counting the two pages would give 12.50).
//   - 700 values (four pages) and one small item: 1 / (1+4+3) = 12.50.
func TestFlashMemoryPressureStat(t *testing.T) {
	for _, tc := range []struct {
		name          string
		values, small int
		automove      uint32
		want          string
	}{
		{"automove off", 4000, 12000, 0, "0.00"},
		{"no header pages", 4000, 0, 1, "0.00"},
		{"one header page of the reserve", 4000, 6000, 1, "12.50"},
		{"the whole reserve", 4000, 12000, 1, "25.00"},
		{"value class of two pages is no source", 400, 1, 1, "16.67"},
		{"value class of four pages", 700, 1, 1, "12.50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := pressureStore(t, tc.values, tc.small)
			s.SetAutomove(tc.automove, 0.8, 30)
			if p := fmt.Sprintf("%.2f", s.FlashMemoryPressure()); p != tc.want {
				var layout []string
				for _, c := range s.Classes() {
					if c.TotalPages > 0 {
						layout = append(layout, fmt.Sprintf("class %d (chunk %d): %d pages", c.ID, c.ChunkSize, c.TotalPages))
					}
				}
				t.Fatalf("pressure %s, want %s; %v, pool %d", p, tc.want, layout, s.slabs.arena.poolPages())
			}
		})
	}
}
