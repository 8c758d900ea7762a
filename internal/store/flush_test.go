package store

import "testing"

// TestFlushAllPastAbsolute: an absolute time already past empties the store
// (memcached's CAS check flushes every older item), except under -C, where
// memcached compares store times only.
func TestFlushAllPastAbsolute(t *testing.T) {
	for _, noCAS := range []bool{false, true} {
		clk := newFakeClock()
		start := clk.Now()
		s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now, DisableCAS: noCAS})
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
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
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

// A flush_all that comes into force replaces the time cutoff an earlier
// one set, as memcached's oldest_live is simply overwritten: `flush_all 1`
// then `flush_all` in the same second leave the second flush's cutoff
// (now-1, with the CAS cutoff covering the rest), so what is stored after
// it stays. Keeping the first flush's later cutoff hid every item stored
// in the rest of that second (Cache::Memcached::Fast's staggered
// flush_all(delay) followed by a plain flush_all did this).
func TestFlushAllAfterDelayOne(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
	set(s, "before", "v")
	s.FlushAll(1)
	set(s, "between", "v")
	s.FlushAll(0)
	set(s, "after", "v")
	for key, want := range map[string]bool{"before": false, "between": false, "after": true} {
		if _, _, ok := get(s, key); ok != want {
			t.Errorf("%s visible = %v, want %v", key, ok, want)
		}
	}
	clk.advance(1)
	if _, _, ok := get(s, "after"); !ok {
		t.Error("the item stored after both flushes is gone a second later")
	}
	checkInvariants(t, s)
}

// TestFlushAllClientCAS: an item given its CAS by the client (meta E) is
// flushed by its store time alone. Compared with the flush's CAS cutoff, a
// small client CAS hid every such item stored after any flush_all (an
// `ms k 1 E1` right after `flush_all` read back as a miss). Like every
// item in memcached 1.6.45, one stored earlier in the flush's own second
// stays; one stored in an earlier second goes.
func TestFlushAllClientCAS(t *testing.T) {
	small := NewCAS{Set: true, Value: 1}
	store := map[string]func(s *Store, key string){
		"ms E": func(s *Store, key string) {
			s.SetItem(SetRequest{Key: []byte(key), Value: []byte("v"), NewCAS: small})
		},
		"ma E, created": func(s *Store, key string) {
			s.Arith([]byte(key), ArithRequest{Delta: 1, Vivify: true, NewCAS: small}, func(Item, uint64, bool) {})
		},
		"ma E, in place": func(s *Store, key string) {
			set(s, key, "5")
			s.Arith([]byte(key), ArithRequest{Delta: 1, NewCAS: small}, func(Item, uint64, bool) {})
		},
	}
	for name, put := range store {
		clk := newFakeClock()
		s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
		put(s, "earlier")
		clk.advance(1)
		put(s, "same-second")
		s.FlushAll(0)
		put(s, "after")
		for key, want := range map[string]bool{"earlier": false, "same-second": true, "after": true} {
			if _, _, ok := get(s, key); ok != want {
				t.Errorf("%s: %s visible %v after flush_all, want %v", name, key, ok, want)
			}
		}
		// The store's own CAS still flushes exactly: set in the flush's
		// second, before it.
		set(s, "own", "v")
		s.FlushAll(0)
		if _, _, ok := get(s, "own"); ok {
			t.Errorf("%s: an item with the store's CAS survived the flush after it", name)
		}
		checkInvariants(t, s)
	}
}
