package store

import (
	"bytes"
	"fmt"
	"testing"
)

func TestDebugIssue22(t *testing.T) {
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
		t.Logf("reserve %v: items %d evictions %d malloced %d", reserve, st.CurrItems, st.Evictions, st.TotalMallocedBytes)
		checkInvariants(t, s)
	}
}
