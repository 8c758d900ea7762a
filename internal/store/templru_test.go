package store

import (
	"fmt"
	"strings"
	"testing"
)

// tempTotals sums the TEMP LRU's counters over all classes.
func tempTotals(s *Store) (temp, hits uint64) {
	for _, c := range s.Classes() {
		temp += c.Temp
		hits += c.HitsToTemp
	}
	return temp, hits
}

// fillRing stores n items of vlen bytes that live for ttl seconds.
func fillRing(t *testing.T, s *Store, prefix string, n, vlen int, ttl int64) {
	t.Helper()
	v := []byte(strings.Repeat("B", vlen))
	for i := range n {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "%s%d", prefix, i), 0, ttl, v, 0); r != Stored {
			t.Fatalf("set %s%d: %v", prefix, i, r)
		}
	}
}

// memcached's t/lru-maintainer.t scenario: with -m 2, a canary stored with
// a 30 s ttl survives 100 long-lived items of the same size when the TEMP
// LRU is on, unread; without it, the canary is the first to go.
func TestTemporaryItemsAreNotEvicted(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("temp_lru=%v", on), func(t *testing.T) {
			clk := newFakeClock()
			s := newManualStore(t, Config{MemoryLimit: 2 << 20, Now: clk.Now})
			if on {
				s.SetTemporaryTTL(61)
			}
			fillRing(t, s, "canary", 1, 66560, 30)
			fillRing(t, s, "key", 100, 66560, 3600)
			checkInvariants(t, s)
			if s.Stats().Evictions == 0 {
				t.Fatal("no evictions: the test does not fill the store")
			}
			_, _, kept := get(s, "canary0")
			temp, hits := tempTotals(s)
			if on && (!kept || temp != 1 || hits != 1) {
				t.Fatalf("temp_lru on: canary kept=%v, temporary items %d (want 1), hits %d (want 1)", kept, temp, hits)
			}
			if !on && (kept || temp != 0) {
				t.Fatalf("temp_lru off: canary kept=%v, temporary items %d: want evicted, 0", kept, temp)
			}
		})
	}
}

// A temporary item still expires, and is then reclaimed like any other.
func TestTemporaryItemsExpire(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 2 << 20, Now: clk.Now})
	s.SetTemporaryTTL(61)
	fillRing(t, s, "canary", 1, 66560, 30)
	clk.advance(31)
	fillRing(t, s, "key", 100, 66560, 3600)
	checkInvariants(t, s)
	if _, _, ok := get(s, "canary0"); ok {
		t.Fatal("expired temporary item still served")
	}
	if temp, _ := tempTotals(s); temp != 0 {
		t.Fatalf("%d temporary items counted after expiry", temp)
	}
}

// Which items are temporary: memcached's rule, exptime at most ttl seconds
// away, never an item without one; replacing or deleting one uncounts it.
func TestTemporaryItemRule(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 8 << 20, Now: clk.Now})
	s.SetTemporaryTTL(10)
	for _, c := range []struct {
		ttl  int64
		temp bool
	}{{0, false}, {1, true}, {10, true}, {11, false}, {clk.Now() + 5, true}, {clk.Now() + 3600, false}} {
		s.Set(ModeSet, []byte("k"), 0, c.ttl, []byte("v"), 0)
		if temp, _ := tempTotals(s); temp != uint64(b2i(c.temp)) {
			t.Errorf("exptime %d: %d temporary items, want temporary=%v", c.ttl, temp, c.temp)
		}
		checkInvariants(t, s)
	}
	s.Set(ModeSet, []byte("k"), 0, 5, []byte("v"), 0)
	s.Delete([]byte("k"))
	if temp, _ := tempTotals(s); temp != 0 {
		t.Fatalf("%d temporary items after delete", temp)
	}
	// Off again: new items are ordinary, the ttl is kept for stats settings.
	s.SetTemporaryTTL(-1)
	s.Set(ModeSet, []byte("k"), 0, 5, []byte("v"), 0)
	if temp, _ := tempTotals(s); temp != 0 {
		t.Fatalf("temp_lru off: %d temporary items", temp)
	}
	if ttl, on := s.TemporaryTTL(); ttl != 10 || on {
		t.Fatalf("TemporaryTTL() = %d, %v; want 10, false", ttl, on)
	}
}

func TestTemporaryTTLDefault(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20})
	if ttl, on := s.TemporaryTTL(); ttl != defaultTemporaryTTL || on {
		t.Fatalf("TemporaryTTL() = %d, %v; want memcached's 61, off", ttl, on)
	}
}

// A ring holding only temporary items cannot make room: the store fails
// with OutOfMemory rather than evict one (or spin).
func TestRingFullOfTemporaryItems(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 2 << 20, Now: clk.Now})
	s.SetTemporaryTTL(61)
	v := []byte(strings.Repeat("B", 66560))
	stored, oom := 0, 0
	for i := range 100 {
		switch r := s.Set(ModeSet, fmt.Appendf(nil, "t%d", i), 0, 30, v, 0); r {
		case Stored:
			stored++
		case OutOfMemory:
			oom++
		default:
			t.Fatalf("set t%d: %v", i, r)
		}
	}
	checkInvariants(t, s)
	if oom == 0 || s.Stats().Evictions != 0 {
		t.Fatalf("stored %d, out of memory %d, evictions %d: want refusals and no evictions", stored, oom, s.Stats().Evictions)
	}
	for i := range stored {
		if _, _, ok := get(s, fmt.Sprintf("t%d", i)); !ok {
			t.Fatalf("temporary item t%d lost", i)
		}
	}
}
