package store

import (
	"testing"
	"time"
)

// newManualStore is newTestStore with the background loop stopped: the
// test runs rounds (step, maintain, reclaim) itself, so nothing happens
// behind its back whatever the scheduler does.
func newManualStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s := newTestStore(t, cfg)
	s.Close()
	return s
}

// loopBase is a made-up wall time for driving step: 300 ms into a second.
var loopBase = time.Unix(1_700_000_000, 300_000_000)

// An idle store's loop wakes once a second, just after the second turns,
// and turns the coarse clock each time. (The store holds an item: an empty
// one sleeps deeper, TestLoopDeepIdle.)
func TestLoopIdleCadence(t *testing.T) {
	s := newManualStore(t, Config{MemoryLimit: 1 << 20})
	set(s, "k", "v")
	var l loopState
	now := loopBase
	for d := time.Duration(0); d <= clockTick; now = now.Add(d) {
		d = s.step(&l, now) // the item's rounds, until the loop backs off
	}
	end := now.Add(10 * time.Second)
	rounds := 0
	for now.Before(end) {
		d := s.step(&l, now)
		rounds++
		if got := s.Now(); got != now.Unix() {
			t.Fatalf("round at %v: clock %d, want %d", now, got, now.Unix())
		}
		if d < 700*time.Millisecond || d > time.Second+clockSlack {
			t.Fatalf("round %d at %v: idle store sleeps %v, want until the next second", rounds, now, d)
		}
		if next := now.Add(d); next.Unix() != now.Unix()+1 || next.Sub(next.Truncate(time.Second)) != clockSlack {
			t.Fatalf("round at %v wakes at %v, want just after the next second boundary", now, next)
		}
		now = now.Add(d)
	}
	if rounds != 10 {
		t.Errorf("%d rounds in 10 idle seconds, want 10", rounds)
	}
}

// Activity brings the fast cadence back: the round after an operation
// comes a clockTick later and the maintainer moves the new items down;
// once nothing is left to do the loop backs off to the second again.
func TestLoopActivityCadence(t *testing.T) {
	s := newManualStore(t, Config{MemoryLimit: 1 << 20})
	var l loopState
	now := loopBase
	now = now.Add(s.step(&l, now))
	for i := range 100 {
		s.Set(ModeSet, key(i), 0, 0, value(i, 100), 0)
	}
	if d := s.step(&l, now); d != clockTick {
		t.Fatalf("round after 100 sets sleeps %v, want %v", d, clockTick)
	}
	if st := s.Stats(); st.MovesToCold == 0 {
		t.Fatalf("maintainer moved nothing from HOT to COLD after 100 sets: %+v", st)
	}
	// A second read marks an item active, which moves it from COLD to
	// WARM at once (bumpFromCold), as memcached's bump does, not counted
	// in moves_to_warm; the reads keep the fast cadence.
	for range 2 {
		for i := range 100 {
			get(s, string(key(i)))
		}
	}
	now = now.Add(clockTick)
	if d := s.step(&l, now); d != clockTick {
		t.Fatalf("round after 200 gets sleeps %v, want %v", d, clockTick)
	}
	warm := 0
	for id := range s.slabs.classes {
		c := &s.slabs.classes[id]
		c.mu.Lock()
		warm += c.q[queueWarm].items
		c.mu.Unlock()
	}
	if warm == 0 {
		t.Fatalf("no item read twice is in WARM: %+v", s.Stats())
	}
	// With nothing more to do, the rounds slow down within a few ticks.
	var d time.Duration
	for range 10 {
		now = now.Add(clockTick)
		if d = s.step(&l, now); d > clockTick {
			break
		}
	}
	if d <= clockTick {
		t.Fatalf("loop still at %v ten rounds after the last operation", d)
	}
}

// The reclaimer runs every reclaimEvery ticks while busy, and on every
// idle round: an item that expires while nothing happens is reclaimed a
// second later at most.
func TestLoopReclaimCadence(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
	var l loopState
	now := loopBase
	now = now.Add(s.step(&l, now))
	s.Set(ModeSet, []byte("short"), 0, 1, []byte("v"), 0)
	clk.advance(2)
	// Busy rounds: another key is written before each; the reclaimer
	// comes on the rounds reclaimEvery ticks apart.
	reclaimedAt := -1
	for i := range 2 * reclaimEvery {
		set(s, "other", "v")
		d := s.step(&l, now)
		if d != clockTick {
			t.Fatalf("busy round %d sleeps %v", i, d)
		}
		if reclaimedAt < 0 && s.Stats().Reclaimed == 1 {
			reclaimedAt = i
		}
		now = now.Add(d)
	}
	if reclaimedAt < 0 || reclaimedAt >= reclaimEvery {
		t.Fatalf("expired item reclaimed at busy round %d, want within %d", reclaimedAt, reclaimEvery)
	}
	// Idle: let the loop back off, then expire an item stored earlier.
	s.Set(ModeSet, []byte("later"), 0, 5, []byte("v"), 0)
	for d := time.Duration(0); d <= clockTick; now = now.Add(d) {
		d = s.step(&l, now)
	}
	clk.advance(10)
	s.step(&l, now)
	if st := s.Stats(); st.Reclaimed != 2 || st.CurrItems != 1 {
		t.Fatalf("idle round: reclaimed %d curr_items %d, want 2 and 1", st.Reclaimed, st.CurrItems)
	}
}

// The real loop of an idle store wakes about once a second. Timers fire
// late under load, never early, so only the upper bound is checked.
func TestBackgroundLoopIdleWakes(t *testing.T) {
	t.Parallel()
	s := newTestStore(t, Config{MemoryLimit: 1 << 20})
	set(s, "k", "v")
	time.Sleep(100 * time.Millisecond) // the item's fast rounds
	const window = 2 * time.Second
	before := s.wakes.Load()
	time.Sleep(window)
	if n := s.wakes.Load() - before; n > 4 {
		t.Fatalf("idle store's loop ran %d rounds in %v, want about 2", n, window)
	}
}

// Operations after an idle spell wake the loop: the maintainer runs soon,
// not at the next second.
func TestBackgroundLoopWakesOnActivity(t *testing.T) {
	t.Parallel()
	s := newTestStore(t, Config{MemoryLimit: 1 << 20})
	for i := range 100 {
		s.Set(ModeSet, key(i), 0, 0, value(i, 100), 0)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.Stats().MovesToCold == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the maintainer never moved the new items down")
		}
		time.Sleep(time.Millisecond)
	}
}

// A store larger than one reclaimer round's budget, with items that can
// expire, keeps the fast cadence until the reclaimer's pass over it ends,
// then backs off: its sweeps start at most once a second.
func TestLoopLargeStoreBacksOff(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 32 << 20, Now: clk.Now})
	for i := range 3 * reclaimBudget {
		s.Set(ModeSet, key(i), 0, 3600, []byte("v"), 0)
	}
	var l loopState
	now := loopBase
	reclaims, rounds := 0, 0
	for d := time.Duration(0); d <= clockTick; now = now.Add(d) {
		if rounds++; rounds > 1000 {
			t.Fatal("the loop never backed off")
		}
		before := l.lastReclaim
		d = s.step(&l, now)
		if l.lastReclaim != before {
			reclaims++
		}
	}
	if reclaims < 3 {
		t.Fatalf("loop backed off after %d reclaimer rounds, before a pass over %d items", reclaims, 3*reclaimBudget)
	}
	// The next idle round starts a new pass, which again runs fast.
	if d := s.step(&l, now); d != clockTick {
		t.Fatalf("round starting a new pass sleeps %v, want %v", d, clockTick)
	}
}
