package store

import (
	"fmt"
	"testing"
	"time"
)

// An empty store's loop sleeps deep; an operation brings the fast cadence
// back, and once the store is empty again and nothing is left to do, the
// loop sleeps deep again.
func TestLoopDeepIdle(t *testing.T) {
	s := newManualStore(t, Config{MemoryLimit: 1 << 20})
	var l loopState
	now := loopBase
	if d := s.step(&l, now); d != deepIdleWake {
		t.Fatalf("empty store's round sleeps %v, want %v", d, deepIdleWake)
	}
	set(s, "k", "v")
	if d := s.step(&l, now); d != clockTick {
		t.Fatalf("round after a set sleeps %v, want %v", d, clockTick)
	}
	s.Delete([]byte("k"))
	rounds := 0
	for d := time.Duration(0); d != deepIdleWake; now = now.Add(d) {
		if rounds++; rounds > 100 {
			t.Fatalf("the loop never slept deep after the store emptied (last sleep %v)", d)
		}
		d = s.step(&l, now)
		if d > time.Second+clockSlack && d != deepIdleWake {
			t.Fatalf("round sleeps %v", d)
		}
	}
}

// Free pages the automover would give back keep an empty store's loop in
// its once-a-second rounds until they are given back.
func TestLoopDeepIdleWaitsForTheAutomover(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 16 << 20, Now: clk.Now})
	s.SetAutomove(1, 0.8, 3)
	for i := range 3000 {
		s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, make([]byte, 2000), 0)
	}
	for i := range 3000 {
		s.Delete(fmt.Appendf(nil, "k%d", i))
	}
	if s.quiescent() {
		t.Fatal("a class with some 6 MB of free chunks counts as nothing to do")
	}
	var l loopState
	now := loopBase
	deep := false
	for range 200 {
		clk.advance(1)
		d := s.step(&l, now)
		if d == deepIdleWake {
			deep = true
			break
		}
		now = now.Add(d)
	}
	if !deep {
		t.Fatal("the loop never slept deep after 200 rounds")
	}
	for _, c := range s.Classes() {
		if float64(c.FreeChunks) > float64(c.ChunksPer)*2.5 {
			t.Fatalf("deep idle while class %d holds %d free chunks (%d a page)", c.ID, c.FreeChunks, c.ChunksPer)
		}
	}
}

// While the loop sleeps deep, a reader turns the clock itself: forward to
// the real time plus debugtime's shift, not while paused, never back.
func TestNowCatchesUpWhileLazy(t *testing.T) {
	s := newManualStore(t, Config{MemoryLimit: 1 << 20})
	s.clock.Store(1000)
	if got := s.Now(); got != 1000 {
		t.Fatalf("clock read %d with the loop turning it, want 1000 (the clock as set)", got)
	}
	s.clockLazy.Store(true)
	before := time.Now().Unix()
	got := s.Now()
	if after := time.Now().Unix(); got < before || got > after {
		t.Fatalf("lazy clock read %d, want the real time %d..%d", got, before, after)
	}
	s.debugTime.shift.Store(100)
	s.debugTime.lastSec.Store(0)
	if got := s.Now(); got < before+100 {
		t.Fatalf("lazy clock read %d with a shift of 100, want at least %d", got, before+100)
	}
	s.clock.Store(1 << 40) // a debugtime jump: lasts until the second turns
	if got := s.Now(); got != 1<<40 {
		t.Fatalf("lazy clock moved back to %d", got)
	}
	s.clock.Store(1000)
	s.debugTime.lastSec.Store(0)
	s.PauseClock(true)
	if got := s.Now(); got != 1000 {
		t.Fatalf("paused lazy clock read %d, want 1000", got)
	}
}

// The real loop of an empty store does not wake while nothing happens,
// and its clock still reads the real time.
func TestBackgroundLoopDeepIdle(t *testing.T) {
	t.Parallel()
	s := newTestStore(t, Config{MemoryLimit: 1 << 20})
	for deadline := time.Now().Add(30 * time.Second); !s.clockLazy.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("an empty store's loop never slept deep")
		}
	}
	before := s.wakes.Load()
	time.Sleep(2500 * time.Millisecond)
	if n := s.wakes.Load() - before; n != 0 {
		t.Fatalf("an empty store's loop ran %d rounds in 2.5 s, want none", n)
	}
	lo := time.Now().Unix()
	if got := s.Now(); got < lo || got > time.Now().Unix() {
		t.Fatalf("clock %d during deep idle, want the real time (%d)", got, lo)
	}
}
