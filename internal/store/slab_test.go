package store

import (
	"bytes"
	"fmt"
	"testing"
)

// memcached's issue_22.t with -m 3: 66560-byte values take 82792-byte
// chunks of class 31, 12 to a page, 3 pages; the first 40 sets evict
// exactly 4, whether each value arrives whole or into a reservation (whose
// chunk must not stay pinned once committed), and no more pages are taken.
func TestChunksPerPageAndEvictions(t *testing.T) {
	for _, reserve := range []bool{false, true} {
		s := newTestStore(t, Config{MemoryLimit: 3 << 20, MaxItemSize: 1 << 20, SlabChunkMax: 512 << 10})
		v := bytes.Repeat([]byte{'x'}, 66560)
		for i := range 40 {
			k := fmt.Appendf(nil, "key%d", i)
			var r Result
			if reserve {
				rv := s.Reserve(k, len(v))
				fillAt(s, &rv, 0, v, len(v))
				r, _ = s.CommitReserved(&rv, SetRequest{Mode: ModeSet, Key: k})
			} else {
				r = s.Set(ModeSet, k, 0, 0, v, 0)
			}
			if r != Stored {
				t.Errorf("reserve %v: set %d: %v", reserve, i, r)
			}
		}
		st := s.Stats()
		if st.CurrItems != 36 || st.Evictions != 4 || st.TotalMallocedBytes != 3<<20 {
			t.Errorf("reserve %v: items %d evictions %d malloced %d; want 36, 4 and 3 MiB", reserve, st.CurrItems, st.Evictions, st.TotalMallocedBytes)
		}
		c := &s.slabs.classes[s.ItemClass(5, len(v), 0)]
		if c.id != 31 || c.size != 82792 || c.pages != 3 {
			t.Errorf("class %d, chunk %d, %d pages; want 31, 82792 and 3", c.id, c.size, c.pages)
		}
		checkInvariants(t, s)
	}
}
