package store

import (
	"testing"
	"time"
)

func TestDebugClockShiftAndPause(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 20})
	s.PauseClock(true) // no tick may move it while the test reads it
	base := time.Now().Unix()
	s.clock.Store(base)
	s.ShiftClock(3)
	if got := s.Now(); got != base+3 {
		t.Fatalf("after debugtime 3: now %d, want %d", got, base+3)
	}
	s.ShiftClock(4) // memcached-debug adds the accumulated shift, 7
	if got := s.Now(); got != base+10 {
		t.Fatalf("after debugtime 4: now %d, want %d", got, base+10)
	}
	s.tickClock(time.Unix(base+1, 0))
	if got := s.Now(); got != base+10 {
		t.Fatalf("a tick moved a paused clock to %d", got)
	}
	s.PauseClock(false)
	s.tickClock(time.Unix(base+1, 0))
	if got := s.Now(); got != base+8 {
		t.Fatalf("tick after resume: now %d, want real+shift %d", got, base+8)
	}

	// A jump lasts until the real second turns, however often the store
	// ticks within that second (memcached's clock ticks once a second).
	s.ShiftClock(1) // total shift 8: the clock jumps by 8
	s.tickClock(time.Unix(base+1, 5e8))
	if got := s.Now(); got != base+16 {
		t.Fatalf("a tick within the same second undid the jump: now %d, want %d", got, base+16)
	}
	s.tickClock(time.Unix(base+2, 0))
	if got := s.Now(); got != base+10 {
		t.Fatalf("tick in the next second: now %d, want real+shift %d", got, base+10)
	}

	// Expiry follows the shifted clock.
	if r := s.Set(ModeSet, []byte("k"), 0, 2, []byte("v"), 0); r != Stored {
		t.Fatalf("set: %v", r)
	}
	s.ShiftClock(2)
	if _, _, ok := get(s, "k"); ok {
		t.Errorf("item with a 2 s TTL still there after debugtime 2")
	}
}
