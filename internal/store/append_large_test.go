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
		// The expected value lives in buf, grown at the end for appends and
		// at the front for prepends, so that each step copies only the new
		// part: under -race every byte copied in Go memory costs.
		const base, limit = 64 << 10, 400 << 10 // (within one chunk: no page runs)
		buf := make([]byte, 2*limit)
		start := limit
		reset := func() []byte {
			start = limit
			want := buf[start : start+base]
			for i := range want {
				want[i] = 'a'
			}
			return want
		}
		want := reset()
		if r := s.Set(ModeSet, key, 0, 0, want, 0); r != Stored {
			t.Fatalf("set: %v", r)
		}
		for i := range 2000 {
			part := bytes.Repeat([]byte{byte('b' + i%20)}, 4<<10)
			if len(want)+len(part) > limit {
				want = reset()
				if r := s.Set(ModeSet, key, 0, 0, want, 0); r != Stored {
					t.Fatalf("reset: %v", r)
				}
			}
			if r := s.Set(mode, key, 0, 0, part, 0); r != Stored {
				t.Fatalf("%v %d: %v", mode, i, r)
			}
			if mode == ModeAppend {
				want = append(want, part...) // (buf has room: no new array)
			} else {
				start -= len(part)
				copy(buf[start:], part)
				want = buf[start : start+len(want)+len(part)]
			}
			same, n := false, -1
			ok := s.Get(key, func(v []byte, _ Meta) { same, n = bytes.Equal(v, want), len(v) })
			if !ok || !same {
				t.Fatalf("%v %d: value of %d bytes differs from the %d expected", mode, i, n, len(want))
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
