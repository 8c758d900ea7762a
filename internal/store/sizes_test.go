package store

import (
	"fmt"
	"strings"
	"testing"
)

// sizesOf renders the histogram as "size:count ..." ("off" when off).
func sizesOf(s *Store) string {
	var b strings.Builder
	if !s.Sizes(func(size int, n int32) { fmt.Fprintf(&b, "%d:%d ", size, n) }) {
		return "off"
	}
	return strings.TrimSpace(b.String())
}

// TestSizesAtRunTime follows memcached 1.6.18's `stats sizes` as it answers
// this sequence: an item stored before sizes_enable is never counted (its
// CAS is older), a replacement of it is, a delete uncounts, and sizes are
// memcached's item sizes (56-byte header with CAS, key, NUL, value, CRLF)
// rounded up to 32.
func TestSizesAtRunTime(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20})
	if got := sizesOf(s); got != "off" {
		t.Fatalf("before enabling: %s", got)
	}
	set(s, "a", "0123456789") // before: not counted
	if !s.EnableSizes() {
		t.Fatal("EnableSizes refused with CAS on")
	}
	if !s.SizesTracked() {
		t.Fatal("SizesTracked false after EnableSizes")
	}
	set(s, "bb", "hello") // 56+2+1+7 = 66: bucket 96
	set(s, "a", "abc")    // 56+1+1+5 = 63: bucket 64; the old a is not uncounted
	if got, want := sizesOf(s), "64:1 96:1"; got != want {
		t.Fatalf("after two sets: %s, want %s", got, want)
	}
	s.Delete([]byte("bb"))
	if got, want := sizesOf(s), "64:1"; got != want {
		t.Fatalf("after delete: %s, want %s", got, want)
	}
	// A size exactly on a bucket edge stays in it: 56+1+1+4+2 = 64.
	set(s, "c", "wxyz")
	if got, want := sizesOf(s), "64:2"; got != want {
		t.Fatalf("edge: %s, want %s", got, want)
	}
	s.DisableSizes()
	if got := sizesOf(s); got != "off" {
		t.Fatalf("after disable: %s", got)
	}
	if s.SizesTracked() {
		t.Fatal("SizesTracked true after DisableSizes")
	}
	s.Delete([]byte("a")) // no histogram to uncount from
	if !s.EnableSizes() {
		t.Fatal("re-enable refused")
	}
	if got, want := sizesOf(s), ""; got != want {
		t.Fatalf("re-enabled: %q, want an empty histogram (c is older)", got)
	}
	checkInvariants(t, s)
}

// TestSizesFromStart: -o track_sizes counts every item, with -C too (no
// CAS field: 8 bytes less), and sizes_enable is refused under -C.
func TestSizesFromStart(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, TrackSizes: true, DisableCAS: true})
	set(s, "a", "0123456789") // 48+1+1+12 = 62: bucket 64
	set(s, "b", strings.Repeat("x", 2000))
	if got, want := sizesOf(s), "64:1 2080:1"; got != want { // 48+1+1+2002 = 2052
		t.Fatalf("got %s, want %s", got, want)
	}
	if s.EnableSizes() {
		t.Error("EnableSizes accepted under -C; memcached refuses (cas_support_disabled)")
	}
	if got, want := sizesOf(s), "64:1 2080:1"; got != want {
		t.Fatalf("after a refused enable: %s, want %s", got, want)
	}
}

// TestSizesFollowInPlaceChanges: an incr rewritten in place gets a new CAS,
// so an item stored before enabling becomes counted, once; expiry and
// eviction uncount through the same unlink as delete.
func TestSizesFollowInPlaceChanges(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 8 << 20, Now: clk.Now})
	set(s, "n", "100")
	s.EnableSizes()
	if r := s.Arith([]byte("n"), ArithRequest{Delta: 1}, func(Item, uint64, bool) {}); r != Stored {
		t.Fatalf("incr: %v", r)
	}
	if got, want := sizesOf(s), "64:1"; got != want { // 56+1+1+5 = 63
		t.Fatalf("after in-place incr: %s, want %s", got, want)
	}
	s.Arith([]byte("n"), ArithRequest{Delta: 1}, func(Item, uint64, bool) {})
	if got, want := sizesOf(s), "64:1"; got != want {
		t.Fatalf("after a second incr: %s, want %s", got, want)
	}
	s.Set(ModeSet, []byte("e"), 0, 10, []byte("v"), 0)
	clk.advance(20)
	if _, _, ok := get(s, "e"); ok {
		t.Fatal("expired item found")
	}
	if got, want := sizesOf(s), "64:1"; got != want {
		t.Fatalf("after expiry: %s, want %s", got, want)
	}
	checkInvariants(t, s)
}

// TestSizesEvictions: items evicted leave the histogram, so it matches
// what is stored after the ring has turned over many times.
func TestSizesEvictions(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 2 << 20, MaxItemSize: 64 << 10, TrackSizes: true})
	val := strings.Repeat("v", 900)
	for i := range 20000 {
		set(s, fmt.Sprintf("key%06d", i), val)
	}
	var counted int32
	s.Sizes(func(_ int, n int32) { counted += n })
	if items := s.Stats().CurrItems; uint64(counted) != items {
		t.Fatalf("histogram counts %d items, the store holds %d", counted, items)
	}
	if s.Stats().Evictions == 0 {
		t.Fatal("no evictions: the test did not turn the ring over")
	}
}
