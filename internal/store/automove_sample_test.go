package store

import (
	"fmt"
	"testing"
)

// sampledStore is a manual store of 4 MB in 4 shards on clock that has
// evicted and aged its items in two classes.
func sampledStore(t *testing.T, clock *fakeClock) *Store {
	t.Helper()
	s := newManualStore(t, Config{MemoryLimit: 4 << 20, Shards: 4, Now: clock.Now})
	for i := range 6000 {
		s.Set(ModeSet, fmt.Appendf(nil, "small%d", i), 0, 0, make([]byte, 40), 0)
		s.Set(ModeSet, fmt.Appendf(nil, "big%d", i), 0, 0, make([]byte, 3000), 0)
	}
	clock.advance(30)
	maintainUntilIdle(s, clock)
	clock.advance(7)
	if s.Stats().Evictions == 0 {
		t.Fatal("the fill did not evict")
	}
	return s
}

// What a check samples of each class is what `stats slabs` and `stats
// items` report of it.
func TestSampleClassesMatchesClasses(t *testing.T) {
	clock := newFakeClock()
	s := sampledStore(t, clock)
	got := s.sampleClasses(make([]classSample, len(s.slabs.classes)))
	evicting, aged := 0, 0
	for _, c := range s.Classes() {
		g := got[c.ID]
		want := classSample{evicted: c.Evicted, oom: c.Outofmemory, pages: c.TotalPages,
			free: int(c.FreeChunks), perPage: c.ChunksPer, coldAge: uint32(c.OldestAge)}
		if g != want {
			t.Errorf("class %d: sampled %+v, Classes says %+v", c.ID, g, want)
		}
		evicting += b2i(c.Evicted > 0)
		aged += b2i(c.OldestAge > 0)
	}
	if evicting == 0 || aged < 2 {
		t.Fatalf("%d classes evicted and %d have aged COLD tails, want 1 and 2: the store tests little", evicting, aged)
	}
}

// A check allocates nothing once its window exists: an idle server makes
// one a second, and garbage each second kept the runtime faulting pages in
// and returning them.
func TestAutomoveCheckAllocatesNothing(t *testing.T) {
	clock := newFakeClock()
	s := sampledStore(t, clock)
	a := &s.automove
	a.mu.Lock()
	defer a.mu.Unlock()
	for range 2 { // the window, then both sample buffers
		s.automoveDecide(1)
	}
	if n := testing.AllocsPerRun(20, func() { s.automoveDecide(1) }); n != 0 {
		t.Fatalf("a check allocates %.1f times, want 0", n)
	}
}
