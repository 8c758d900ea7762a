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
		count    int   // memcached's largest class id
		tail     []int // its last chunk sizes
	}{
		{"default", 512 << 10, 0, 0, 39, []int{315872, 394840, 524288}},
		{"-I 2k -o slab_chunk_max=2048", 2048, 0, 0, 14, []int{1184, 1480, 2048}},
		{"-o no_modern", 1 << 20, 0, 0, 42, []int{616944, 771184, 1048576}},
		{"-o slab_chunk_max=16384", 16384, 0, 0, 23, []int{11104, 16384}},
		{"-n 600000", 512 << 10, 600000, 0, 1, []int{524288}},
		{"-f 1.01", 512 << 10, 0, 1.01, 63, []int{96, 96, 524288}},
	} {
		got := sizeClasses(tc.chunkMax, tc.min, tc.factor)
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
		found, c, _ := s.Peek([]byte(tc.key))
		if !found {
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
