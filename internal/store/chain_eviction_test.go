package store

import (
	"bytes"
	"fmt"
	"testing"
)

// Values above slab_chunk_max (512 KiB by default) take runs of whole
// pages in the largest class. Once the class's chunk items took the pages
// up to the limit, evicting them only fills the class's free list, which
// a run cannot use: every large set fails with OutOfMemory, while memcached
// stores it as a chain of chunks, evicting as needed.
func TestLargeValueAfterChunkValuesIsStored(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20})
	mid := bytes.Repeat([]byte{'m'}, 500<<10) // a 512 KiB chunk each
	for i := range 40 {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "mid%d", i), 0, 0, mid, 0); r != Stored {
			t.Fatalf("mid %d: %v", i, r)
		}
	}
	big := bytes.Repeat([]byte{'b'}, 600<<10)
	fails := 0
	for i := range 20 {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "big%d", i), 0, 0, big, 0); r != Stored {
			fails++
		}
	}
	if fails > 0 {
		st := s.Stats()
		t.Errorf("%d of 20 sets of 600 KiB failed (evictions %d, out of memory %d, items %d)", fails, st.Evictions, st.OutOfMemory, st.CurrItems)
	}
	checkInvariants(t, s)
}
