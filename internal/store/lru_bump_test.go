package store

import (
	"fmt"
	"testing"
)

// queueOf is the LRU queue of key's record; -1 when absent.
func queueOf(s *Store, key string) int {
	pos := flashPosOf(s, key)
	if pos < 0 {
		return -1
	}
	return s.slabs.rec(uint64(pos)).queue()
}

// An item made active while in COLD (its second read, or touch) moves to
// WARM at once, as memcached's do_item_bump hands it to the maintainer
// (lru_bump_async) rather than leaving it for COLD's tail pull; a first
// read only marks it fetched, and an item outside COLD stays where it is.
func TestReadBumpsOutOfCold(t *testing.T) {
	clock := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 64 << 20, Shards: 1, Now: clock.Now})
	fillCold(t, s, clock, 20)
	for _, k := range []string{"k3", "k4", "k5"} {
		if q := queueOf(s, k); q != queueCold {
			t.Fatalf("%s in queue %d before the reads, want COLD", k, q)
		}
	}
	reads := []struct {
		key  string
		read func(key string)
		n    int
		want int
	}{
		{"k3", func(k string) { get(s, k) }, 1, queueCold},
		{"k4", func(k string) { get(s, k) }, 2, queueWarm},
		{"k5", func(k string) { s.Touch([]byte(k), 0) }, 2, queueWarm},
	}
	warm := s.Stats().MovesToWarm
	for _, r := range reads {
		for range r.n {
			r.read(r.key)
		}
		if q := queueOf(s, r.key); q != r.want {
			t.Fatalf("%s after %d reads in queue %d, want %d", r.key, r.n, q, r.want)
		}
	}
	// Counted in moves_to_warm, as memcached's item_link_q_warm counts it
	// (lru-maintainer.t looks for it).
	if got := s.Stats().MovesToWarm - warm; got != 2 {
		t.Fatalf("moves_to_warm grew by %d, want 2", got)
	}
	// Bumped out of COLD, the item is not active any more (memcached
	// clears ITEM_ACTIVE with the move): COLD's tail pull would not move
	// it again.
	sh, tag := s.shardFor([]byte("k4"))
	sh.mu.Lock()
	bits := sh.rec(sh.posOf(sh.find([]byte("k4"), tag))).bits()
	sh.mu.Unlock()
	if bits&recReferenced != 0 {
		t.Fatal("k4 still active after its bump to WARM")
	}
	checkInvariants(t, s)
	for i := range 20 {
		if _, _, ok := get(s, fmt.Sprintf("k%d", i)); !ok {
			t.Fatalf("k%d lost", i)
		}
	}
}

// A read that makes an item active in COLD while its class lock is busy
// leaves it in COLD and counts a dropped bump (memcached's
// lru_bumps_dropped, counted when its bump buffer is full); with the lock
// free the next read moves it. `stats reset` keeps the count, as
// memcached's bump buffers keep theirs.
func TestBumpDroppedWhileClassBusy(t *testing.T) {
	clock := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 64 << 20, Shards: 1, Now: clock.Now})
	fillCold(t, s, clock, 20)
	pos := flashPosOf(s, "k3")
	if pos < 0 || queueOf(s, "k3") != queueCold {
		t.Fatalf("k3 not in COLD after fillCold")
	}
	c := &s.slabs.classes[s.slabs.rec(uint64(pos)).class()]
	c.mu.Lock() // busy: an allocation or the maintainer at work
	get(s, "k3")
	get(s, "k3") // active now, its bump dropped
	c.mu.Unlock()
	if q := queueOf(s, "k3"); q != queueCold {
		t.Fatalf("k3 in queue %d after reads while its class was busy, want COLD", q)
	}
	if got := s.Stats().LRUBumpsDropped; got != 1 {
		t.Fatalf("lru_bumps_dropped %d, want 1", got)
	}
	get(s, "k3")
	if q := queueOf(s, "k3"); q != queueWarm {
		t.Fatalf("k3 in queue %d after a read with its class free, want WARM", q)
	}
	s.ResetStats()
	if got := s.Stats().LRUBumpsDropped; got != 1 {
		t.Fatalf("lru_bumps_dropped %d after stats reset, want 1 (kept)", got)
	}
	checkInvariants(t, s)
}
