package store

import (
	"strconv"
	"testing"
)

// TestPremallocedShrinksTheRings: memcached's T_MEMD_INITIAL_MALLOC as
// 64bit.t uses it, a limit of 4098 MB of which all but 2 MB count as taken.
func TestPremallocedShrinksTheRings(t *testing.T) {
	const limit, taken = 4098 << 20, 1<<32 + 32
	s := newTestStore(t, Config{MemoryLimit: limit, Premalloced: taken, DisableEvictions: true, MaxItemSize: 1 << 20})
	st := s.Stats()
	if st.TotalMallocedBytes != taken || st.LimitMaxbytes != limit {
		t.Fatalf("total_malloced %d, limit_maxbytes %d; want %d and %d", st.TotalMallocedBytes, st.LimitMaxbytes, taken, limit)
	}
	value := make([]byte, 400<<10)
	stored := 0
	for i := range 8 {
		if s.Set(ModeSet, []byte("big"+strconv.Itoa(i)), 0, 0, value, 0) == Stored {
			stored++
		}
	}
	if stored == 0 || stored*len(value) > limit-taken {
		t.Errorf("%d values of 400 KiB stored; want at least one and no more than the %d bytes left", stored, limit-taken)
	}
	if s2, err := New(Config{MemoryLimit: 64 << 20, Premalloced: 64 << 20}); err == nil {
		s2.Close()
		t.Errorf("a store with no memory left for its rings was created")
	}
}
