package store

import "testing"

// TestFlushAllPastAbsolute: an absolute time already past empties the store
// (memcached's CAS check flushes every older item), except under -C, where
// memcached compares store times only.
func TestFlushAllPastAbsolute(t *testing.T) {
	for _, noCAS := range []bool{false, true} {
		clk := newFakeClock()
		start := clk.Now()
		s := newTestStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now, DisableCAS: noCAS})
		set(s, "old", "v")
		clk.t.Store(start + 100)
		set(s, "newer", "v")
		clk.t.Store(start + 200)
		s.FlushAll(start + 50) // absolute, in the past
		_, _, oldOK := get(s, "old")
		_, _, newerOK := get(s, "newer")
		if oldOK || newerOK != noCAS {
			t.Errorf("-C %v: old visible %v, newer visible %v", noCAS, oldOK, newerOK)
		}
		set(s, "after", "v")
		if _, _, ok := get(s, "after"); !ok {
			t.Errorf("-C %v: item stored after the flush is gone", noCAS)
		}
		checkInvariants(t, s)
	}
}

func TestCancelFlush(t *testing.T) {
	clk := newFakeClock()
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
	set(s, "a", "v")
	s.FlushAll(10)
	s.CancelFlush()
	clk.advance(20)
	if _, _, ok := get(s, "a"); !ok {
		t.Fatal("cancelled flush still flushed")
	}
	if n := s.Stats().CmdFlush; n != 2 {
		t.Fatalf("cmd_flush %d, want 2", n)
	}
}
