package store

import (
	"slices"
	"testing"
)

// memcached 1.6.18's slab classes (memcached -vv) end at slab_chunk_max:
// the last grown class is the one before the unaligned size reaches
// slab_chunk_max/factor, and an item too large for every class (a chunked
// one) is counted in the largest.
func TestSizeClassesEndAtSlabChunkMax(t *testing.T) {
	for _, tc := range []struct {
		name     string
		chunkMax int
		min      int
		factor   float64
		sizes    []int // -o slab_sizes
		count    int   // memcached's largest class id
		tail     []int // its last chunk sizes
	}{
		{"default", 512 << 10, 0, 0, nil, 39, []int{315872, 394840, 524288}},
		{"-I 2k -o slab_chunk_max=2048", 2048, 0, 0, nil, 14, []int{1184, 1480, 2048}},
		{"-o no_modern", 1 << 20, 0, 0, nil, 42, []int{616944, 771184, 1048576}},
		{"-o slab_chunk_max=16384", 16384, 0, 0, nil, 23, []int{11104, 16384}},
		{"-n 600000", 512 << 10, 600000, 0, nil, 1, []int{524288}},
		{"-f 1.01", 512 << 10, 0, 1.01, nil, 63, []int{96, 96, 524288}},
		{"-o slab_sizes=200-400-801-4096", 512 << 10, 0, 0, []int{200, 400, 801, 4096}, 5, []int{0, 200, 400, 808, 4096, 524288}},
	} {
		got := sizeClasses(tc.chunkMax, tc.min, tc.factor, tc.sizes)
		if n := len(got) - 1; n != tc.count || !slices.Equal(got[len(got)-len(tc.tail):], tc.tail) {
			t.Errorf("%s: %d classes ending %v, want %d ending %v", tc.name, n, got[max(0, len(got)-len(tc.tail)):], tc.count, tc.tail)
		}
	}
}

func TestItemClassFollowsSlabChunkMax(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cfg           Config
		key           string
		vlen          int
		wantClass     int
		wantClassSize int // every case is in the largest class
	}{
		// memcached -I 2k -o slab_chunk_max=2048: "me foo" after a
		// 1849-byte set says cls=14 size=1911.
		{"-I 2k 1849", Config{MemoryLimit: 8 << 20, MaxItemSize: 2048, SlabChunkMax: 2048}, "foo", 1849, 14, 2048},
		{"-I 2k 1500", Config{MemoryLimit: 8 << 20, MaxItemSize: 2048, SlabChunkMax: 2048}, "foo", 1500, 14, 2048},
		// Default flags: a 500000-byte value is in class 39 (524288), and
		// so is a 600000-byte (chunked) one.
		{"default 500000", Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20, SlabChunkMax: 512 << 10}, "bar", 500000, 39, 524288},
		{"default 600000", Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20, SlabChunkMax: 512 << 10}, "bar", 600000, 39, 524288},
	} {
		s := newTestStore(t, tc.cfg)
		if res := s.Set(ModeSet, []byte(tc.key), 0, 0, make([]byte, tc.vlen), 0); res != Stored {
			t.Fatalf("%s: set: %v", tc.name, res)
		}
		got := s.Peek([]byte(tc.key))
		p, c := got.Presence, got.Class
		if p != Present {
			t.Fatalf("%s: item gone", tc.name)
		}
		if c != tc.wantClass {
			t.Errorf("%s: class %d, want %d", tc.name, c, tc.wantClass)
		}
		if n := s.ClassCount(); n != tc.wantClass || s.classes.sizes[n] != tc.wantClassSize {
			t.Errorf("%s: largest class %d is %d bytes, want %d of %d", tc.name, n, s.classes.sizes[n], tc.wantClass, tc.wantClassSize)
		}
	}
}

// memcached -o slab_sizes=200-400-800-4096: "me" says cls=1 for a
// 100-byte value under key foo (size 162) and cls=4 for a 1000-byte one
// (size 1062); the largest class is slab_chunk_max.
func TestItemClassFollowsSlabSizes(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20, SlabChunkMax: 512 << 10,
		SlabSizes: []int{200, 400, 800, 4096}})
	for _, tc := range []struct {
		key       string
		vlen      int
		wantClass int
	}{{"foo", 100, 1}, {"bar", 1000, 4}, {"big", 5000, 5}} {
		if res := s.Set(ModeSet, []byte(tc.key), 0, 0, make([]byte, tc.vlen), 0); res != Stored {
			t.Fatalf("set %s: %v", tc.key, res)
		}
		if got := s.Peek([]byte(tc.key)); got.Presence != Present || got.Class != tc.wantClass {
			p, c := got.Presence, got.Class
			t.Errorf("%s (%d bytes): %v class %d, want class %d", tc.key, tc.vlen, p, c, tc.wantClass)
		}
	}
	if n := s.ClassCount(); n != 5 || s.classes.sizes[n] != 512<<10 {
		t.Errorf("largest class %d of %d bytes, want 5 of 524288", n, s.classes.sizes[n])
	}
}
