package store

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// fakeClock is a Config.Now that tests move by hand.
type fakeClock struct{ t atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.t.Store(1_700_000_000)
	return c
}

func (c *fakeClock) Now() int64        { return c.t.Load() }
func (c *fakeClock) advance(sec int64) { c.t.Add(sec) }

func newTestStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(s.Close)
	return s
}

// get returns a copy of key's value and meta.
func get(s *Store, key string) (string, Meta, bool) {
	var v string
	var m Meta
	ok := s.Get([]byte(key), func(value []byte, mm Meta) { v, m = string(value), mm })
	return v, m, ok
}

func set(s *Store, key, value string) Result {
	return s.Set(ModeSet, []byte(key), 0, 0, []byte(value), 0)
}

// fillUntilRefused stores key(i) = val(i) for i = 0, 1, ... until a store
// is refused, and returns how many were stored and the refusal; it fails t
// when limit stores all succeed (memory never ran out).
func fillUntilRefused(t testing.TB, s *Store, limit int, key, val func(i int) []byte) (int, Result) {
	t.Helper()
	for i := range limit {
		if r := s.Set(ModeSet, key(i), 0, 0, val(i), 0); r != Stored {
			return i, r
		}
	}
	t.Fatalf("%d stores, none refused: memory never filled", limit)
	return limit, Stored
}

// checkInvariants walks every shard's index and every class's queues and fails the test if
// the bookkeeping disagrees with what is really there.
func checkInvariants(t testing.TB, s *Store) {
	t.Helper()
	// Every shard locked at once: the background loop (maintainer,
	// reclaimer) changes nothing meanwhile, so shards and classes are
	// checked as one snapshot.
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	for i := range s.shards {
		if err := s.shards[i].verify(); err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
	if err := s.verifySlabs(); err != nil {
		t.Fatal(err)
	}
}

func (sh *shard) verify() error {
	n, expiring := 0, 0
	items := make([]uint64, len(sh.cls))
	temps := make([]uint64, len(sh.cls))
	for slot, e := range sh.idx.slots {
		if e == 0 {
			continue
		}
		pos := sh.posOf(slot)
		r := sh.rec(pos)
		n++
		items[r.class()]++
		if r.bits()&recDead != 0 {
			return fmt.Errorf("indexed record at %d (key %q) is marked dead", pos, r.key())
		}
		if r.bits()&recTemp != 0 {
			temps[r.class()]++
		}
		if r.exptime() != 0 {
			expiring++
		}
		if sh.find(r.key(), tagOfKey(r.key())) != slot {
			return fmt.Errorf("key %q of record at %d not found at its slot", r.key(), pos)
		}
	}
	switch {
	case n != sh.idx.count:
		return fmt.Errorf("index counts %d entries, holds %d", sh.idx.count, n)
	case expiring != sh.expiring:
		return fmt.Errorf("expiring counter %d, index has %d", sh.expiring, expiring)
	}
	for c := range items {
		if items[c] != sh.cls[c].items {
			return fmt.Errorf("class %d: counter %d items, index has %d", c, sh.cls[c].items, items[c])
		}
		if temps[c] != sh.cls[c].temp {
			return fmt.Errorf("class %d: counter %d temporary items, index has %d", c, sh.cls[c].temp, temps[c])
		}
	}
	return nil
}

// verifySlabs checks every class's queues and free list against the
// shards' counts, with every shard locked: each queued record is indexed
// in its shard.
func (s *Store) verifySlabs() error {
	queued := 0
	for id := 1; id < len(s.slabs.classes); id++ {
		c := &s.slabs.classes[id]
		c.mu.Lock()
		inQueues := 0
		for qi := range c.q {
			k, prev := 0, nilLoc
			for pos := c.q[qi].head; pos != nilLoc; pos = s.slabs.rec(pos).next() {
				r := s.slabs.rec(pos)
				if r.prev() != prev || r.queue() != qi || r.class() != id {
					c.mu.Unlock()
					return fmt.Errorf("class %d queue %d: bad links at %d", id, qi, pos)
				}
				prev = pos
				k++
			}
			if k != c.q[qi].items || prev != c.q[qi].tail {
				c.mu.Unlock()
				return fmt.Errorf("class %d queue %d: %d linked, %d counted", id, qi, k, c.q[qi].items)
			}
			inQueues += k
		}
		free := 0
		for pos := c.free; pos != nilLoc; pos = s.slabs.rec(pos).next() {
			free++
		}
		if free != c.nfree {
			c.mu.Unlock()
			return fmt.Errorf("class %d: %d free chunks linked, %d counted", id, free, c.nfree)
		}
		c.mu.Unlock()
		queued += inQueues
	}
	indexed := 0
	for i := range s.shards {
		indexed += s.shards[i].idx.count
	}
	if queued != indexed {
		return fmt.Errorf("%d records queued, %d indexed", queued, indexed)
	}
	return nil
}

func tagOfKey(key []byte) uint32 { return tagOf(xxhash.Sum64(key)) }

// itemBound is what memcached's page rule lets item memory reach: the
// limit, and a page for each class past it.
func itemBound(s *Store, limit int64) uint64 {
	return uint64(limit) + uint64(len(s.slabs.classes)-1)*pageSize
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// holdMover ends a page move under way (as Close does) and keeps new ones
// from starting until the function it returns is called.
func (s *Store) holdMover() (release func()) {
	m := &s.mover
	m.abort.Store(true)
	for {
		s.waitMover()
		m.statMu.Lock()
		if !m.st.Running {
			m.st.Running = true
			m.statMu.Unlock()
			break
		}
		m.statMu.Unlock()
	}
	m.abort.Store(false)
	return func() {
		m.statMu.Lock()
		m.st.Running = false
		m.statMu.Unlock()
	}
}
