package store

import (
	"testing"
	"time"
)

// pacedStore is a stopped store whose one value class holds n items, each
// read twice (active), so that a maintainer pass has many juggle steps.
func pacedStore(t *testing.T, n int) (*Store, *slabClass, uint32) {
	t.Helper()
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 16 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
	for i := range n {
		s.Set(ModeSet, key(i), 0, 0, value(i, 1000), 0)
	}
	s.maintain(clampTime(clk.Now())) // the new items out of HOT
	for range 2 {
		for i := range n {
			get(s, string(key(i)))
		}
	}
	var c *slabClass
	for _, ci := range s.Classes() {
		if ci.Items > 0 {
			c = &s.slabs.classes[ci.ID]
		}
	}
	return s, c, clampTime(clk.Now())
}

// A maintainer pass longer than one slice pauses between slices with the
// class lock free (a store into the class may go on meanwhile), and moves
// what a pass made at once moves.
func TestMaintainerPassIsPaced(t *testing.T) {
	const n = 600
	plain, pc, now := pacedStore(t, n)
	want := plain.maintain(now)
	paced, c, now := pacedStore(t, n)
	// A made-up clock: each look finds 10 us more, so a slice is
	// pacerSlice/10us looks of pacerEvery steps each.
	var mono time.Duration
	p := &pacer{clock: func() time.Duration { mono += 10 * time.Microsecond; return mono }}
	p.wait = func() {
		if !c.mu.TryLock() {
			t.Fatal("the class lock is held during a pause")
		}
		c.mu.Unlock()
	}
	l := loopState{pacer: p}
	paced.step(&l, loopBase)
	got := paced.Stats()
	if wantSt := plain.Stats(); got.MovesToCold != wantSt.MovesToCold || got.MovesToWarm != wantSt.MovesToWarm ||
		got.MovesWithinLRU != wantSt.MovesWithinLRU {
		t.Errorf("paced pass moved (to cold %d, to warm %d, within %d), one at once (%d, %d, %d)",
			got.MovesToCold, got.MovesToWarm, got.MovesWithinLRU, wantSt.MovesToCold, wantSt.MovesToWarm, wantSt.MovesWithinLRU)
	}
	perSlice := int(pacerSlice/(10*time.Microsecond)) * pacerEvery
	if want < 2*perSlice {
		t.Fatalf("the pass moved %d items: too few to need pacing, the test proves nothing", want)
	}
	if p.pauses < 2 {
		t.Errorf("a pass of %d moves paused %d times, want at least 2 (a slice is %d juggle steps here)", want, p.pauses, perSlice)
	}
	for q := range c.q {
		if c.q[q].items != pc.q[q].items {
			t.Errorf("queue %d: %d items after the paced pass, %d after one at once", q, c.q[q].items, pc.q[q].items)
		}
	}
	checkInvariants(t, paced)
}
