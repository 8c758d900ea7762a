package store

import (
	"fmt"
	"testing"
)

// dumpAll walks the whole store with a small slot budget per call and
// returns the keys it saw, with how often.
func dumpAll(t *testing.T, s *Store, budget int) map[string]int {
	t.Helper()
	seen := map[string]int{}
	var c DumpCursor
	for calls := 0; ; calls++ {
		if calls > 1_000_000 {
			t.Fatal("Dump does not finish")
		}
		if s.Dump(&c, budget, func(it Item) bool { seen[string(it.Key())]++; return true }) {
			break
		}
	}
	if !c.Done(s) {
		t.Fatal("Dump returned true before the last shard")
	}
	return seen
}

func TestDumpListsEveryLiveItemOnce(t *testing.T) {
	clock := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 4 << 20, Now: clock.Now})
	for i := range 3000 {
		set(s, fmt.Sprintf("k%d", i), "v")
	}
	s.Set(ModeSet, []byte("gone"), 0, 5, []byte("v"), 0)
	s.Delete([]byte("k7"))
	clock.advance(10)
	for _, budget := range []int{1, 7, 1024, 1 << 30} {
		seen := dumpAll(t, s, budget)
		if len(seen) != 2999 {
			t.Fatalf("budget %d: %d keys, want 2999", budget, len(seen))
		}
		for k, n := range seen {
			if n != 1 || k == "gone" || k == "k7" {
				t.Fatalf("budget %d: key %q seen %d times", budget, k, n)
			}
		}
	}
}

func TestDumpStopsBeforeRefusedItem(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20})
	for i := range 100 {
		set(s, fmt.Sprintf("k%d", i), "v")
	}
	var c DumpCursor
	seen := map[string]int{}
	for taken := 0; ; {
		// Take one item per call: every refused item must come back.
		took := false
		done := s.Dump(&c, 1<<20, func(it Item) bool {
			if took {
				return false
			}
			took = true
			seen[string(it.Key())]++
			taken++
			return true
		})
		if done {
			break
		}
	}
	if len(seen) != 100 {
		t.Fatalf("saw %d keys, want 100", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("key %q seen %d times", k, n)
		}
	}
}

func TestDumpItemFields(t *testing.T) {
	clock := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 4 << 20, Now: clock.Now})
	s.Set(ModeSet, []byte("foo"), 5, 100, []byte("bar"), 0)
	get(s, "foo")
	var got string
	s.Dump(&DumpCursor{}, 1<<30, func(it Item) bool {
		got = fmt.Sprintf("%s exp=%d la=%d fetch=%v cls=%d size=%d", it.Key(), it.Exptime(), it.LastAccess(), it.Fetched(), it.Class(), it.Size())
		return true
	})
	// memcached 1.6.18: key=foo ... fetch=yes cls=1 size=69 for flags 5, "bar".
	want := fmt.Sprintf("foo exp=%d la=%d fetch=true cls=1 size=69", clock.Now()+100, clock.Now())
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestDumpConcurrentWithStores(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 4 << 20})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20000 {
			set(s, fmt.Sprintf("w%d", i%5000), "value")
			if i%3 == 0 {
				s.Delete([]byte(fmt.Sprintf("w%d", (i+7)%5000)))
			}
		}
	}()
	for range 20 {
		dumpAll(t, s, 333)
	}
	<-done
	checkInvariants(t, s)
}

func TestPeekCountsNothing(t *testing.T) {
	clock := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 4 << 20, Now: clock.Now})
	s.Set(ModeSet, []byte("a"), 0, 10, []byte("xyz"), 0)
	before := s.Stats()
	if got, want := s.Peek([]byte("a")), (Peeked{Presence: Present, Class: 1, ValueLen: 3, TTL: 10}); got != want {
		t.Fatalf("Peek(a) = %+v, want %+v", got, want)
	}
	if got := s.Peek([]byte("b")); got != (Peeked{}) {
		t.Fatalf("Peek(b) = %+v for a missing key", got)
	}
	clock.advance(4)
	if got := s.Peek([]byte("a")); got.TTL != 6 {
		t.Fatalf("Peek(a) 4 s later = %+v, want TTL 6", got)
	}
	clock.advance(16)
	if got := s.Peek([]byte("a")); got != (Peeked{Presence: Expired}) {
		t.Fatalf("Peek(a) = %+v for an expired item", got)
	}
	if got := s.Peek([]byte("a")); got.Presence != Expired {
		t.Fatalf("second Peek(a) = %+v: Peek unlinked the expired item", got)
	}
	if after := s.Stats(); after != before {
		t.Fatalf("Peek changed the stats: %+v -> %+v", before, after)
	}
}

// memcached's item_get line says "flushed" for an item a flush_all
// invalidated, even one that has expired since: it tests the flush first.
func TestPeekTellsFlushedFromExpired(t *testing.T) {
	clock := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 4 << 20, Now: clock.Now})
	s.Set(ModeSet, []byte("short"), 0, 5, []byte("x"), 0)
	s.Set(ModeSet, []byte("long"), 0, 0, []byte("y"), 0)
	clock.advance(2)
	s.FlushAll(0)
	clock.advance(5) // "short" is past its exptime now
	for key, want := range map[string]Presence{"short": Flushed, "long": Flushed, "none": Absent} {
		if p := s.Peek([]byte(key)).Presence; p != want {
			t.Errorf("Peek(%s) = %v, want %v", key, p, want)
		}
	}
	if got := s.LogTTL(0); got != 0 {
		t.Errorf("LogTTL(0) = %d", got)
	}
	now := clock.Now()
	for exptime, want := range map[int64]uint32{100: 100, now + 50: 50, now - 10: 1<<32 - 10, -1: 1<<32 - 1} {
		if got := s.LogTTL(exptime); got != want {
			t.Errorf("LogTTL(%d) = %d, want %d", exptime, got, want)
		}
	}
	if got := Flushed.String() + " " + Expired.String() + " " + Absent.String() + " " + Present.String(); got != "flushed expired not_found found" {
		t.Errorf("names %q", got)
	}
}
