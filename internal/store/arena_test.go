package store

import "testing"

func TestArenaReserve(t *testing.T) {
	for _, tc := range []struct {
		limit, asked, want int64
	}{
		{limit: 64 << 20, want: 64 << 30},                      // the floor
		{limit: 32 << 30, want: 128 << 30},                     // four times the limit
		{limit: 64 << 20, asked: 64 << 20, want: 64 << 20},     // what was asked
		{limit: 64 << 20, asked: 2 * maxArena, want: maxArena}, // within the index's reach
		{limit: maxArena, want: maxArena},
	} {
		if got := arenaReserve(tc.limit, tc.asked); got != tc.want {
			t.Errorf("arenaReserve(%d, %d) = %d, want %d", tc.limit, tc.asked, got, tc.want)
		}
	}
}

// TestArenaReserveAsked checks that a store asked for a small reservation
// maps little more than its limit, and that cache_memlimit still works
// within it.
func TestArenaReserveAsked(t *testing.T) {
	const limit = 4 << 20
	s, err := New(Config{MemoryLimit: limit, ArenaReserve: limit, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := int64(len(s.slabs.arena.mem)); got > limit+arenaSlack {
		t.Fatalf("arena maps %d bytes for a %d-byte limit", got, limit)
	}
	if err := s.SetMemoryLimit(2 << 20); err != nil {
		t.Fatalf("lowering the limit: %v", err)
	}
	if res := s.Set(ModeSet, []byte("k"), 0, 0, []byte("v"), 0); res != Stored {
		t.Fatalf("set = %v", res)
	}
}
