package store

import (
	"bytes"
	"fmt"
	"testing"
)

// TestAppendLargeUnderEviction checks append and prepend of large values
// both while the class has free chunks and once every store evicts: the
// old record, pinned while it is copied from, may be the one at the tail,
// and every result must be the old value and the new part, byte for byte.
func TestAppendLargeUnderEviction(t *testing.T) {
	for _, mode := range []Mode{ModeAppend, ModePrepend} {
		s := newTestStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20})
		key := []byte("big")
		want := bytes.Repeat([]byte{'a'}, 64<<10)
		if r := s.Set(ModeSet, key, 0, 0, want, 0); r != Stored {
			t.Fatalf("set: %v", r)
		}
		for i := range 2000 {
			part := bytes.Repeat([]byte{byte('b' + i%20)}, 4<<10)
			if len(want)+len(part) > 400<<10 { // (within one chunk: no page runs)
				want = want[:64<<10]
				if r := s.Set(ModeSet, key, 0, 0, want, 0); r != Stored {
					t.Fatalf("reset: %v", r)
				}
			}
			if r := s.Set(mode, key, 0, 0, part, 0); r != Stored {
				t.Fatalf("%v %d: %v", mode, i, r)
			}
			if mode == ModeAppend {
				want = append(want, part...)
			} else {
				want = append(append([]byte(nil), part...), want...)
			}
			got, _, ok := get(s, string(key))
			if !ok || got != string(want) {
				t.Fatalf("%v %d: value of %d bytes differs from the %d expected", mode, i, len(got), len(want))
			}
			// Filler pushes the classes round.
			for j := 0; j < 4; j++ {
				s.Set(ModeSet, fmt.Appendf(nil, "fill:%d:%d", i, j), 0, 0, part, 0)
			}
		}
		if s.Stats().Evictions == 0 {
			t.Fatalf("%v: nothing was evicted", mode)
		}
		checkInvariants(t, s)
	}
}

// BenchmarkAppendLarge appends 1 KiB to a value of 512 KiB and more (reset
// every 256 appends), in a store with room: the old value, pinned, is
// copied straight into the new chain.
func BenchmarkAppendLarge(b *testing.B) {
	s := newTestStore(b, Config{MemoryLimit: 1 << 30, MaxItemSize: 1 << 20})
	key, base, part := []byte("big"), make([]byte, 512<<10), make([]byte, 1<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(base)))
	for i := 0; b.Loop(); i++ {
		if i%256 == 0 {
			s.Set(ModeSet, key, 0, 0, base, 0)
		}
		if r := s.Set(ModeAppend, key, 0, 0, part, 0); r != Stored {
			b.Fatal(r)
		}
	}
}
