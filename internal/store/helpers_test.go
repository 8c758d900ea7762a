package store

import (
	"flag"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

// mmapRings runs the tests (and benchmarks) over mapped rings
// (Config.Mmap); TestSuiteOverMappedRings sets it in a child run.
var mmapRings = flag.Bool("store.mmap", false, "map the rings outside the Go heap (Config.Mmap)")

func newTestStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	if *mmapRings {
		cfg.Mmap = true
	}
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

// checkInvariants walks every shard's ring and index and fails the test if
// the bookkeeping disagrees with what is really there.
func checkInvariants(t testing.TB, s *Store) {
	t.Helper()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		if err := sh.verify(); err != nil {
			sh.mu.Unlock()
			t.Fatalf("shard %d: %v", i, err)
		}
		sh.mu.Unlock()
	}
}

func (sh *shard) verify() error {
	live, n, expiring := 0, 0, 0
	items := make([]uint64, len(sh.cls))
	temps := make([]uint64, len(sh.cls))
	var err error
	sh.forEachLive(func(pos int) {
		r := sh.rec(pos)
		live += r.size()
		n++
		items[r.class()]++
		if r.bits()&recTemp != 0 {
			temps[r.class()]++
		}
		if r.exptime() != 0 {
			expiring++
		}
		if err == nil && sh.slotOfRecord(pos) < 0 {
			err = fmt.Errorf("live record at %d (key %q) not in the index", pos, r.key())
		}
		if err == nil && sh.find(r.key(), tagOfKey(r.key())) < 0 {
			err = fmt.Errorf("key %q of live record at %d not found", r.key(), pos)
		}
	})
	switch {
	case err != nil:
		return err
	case live != sh.live:
		return fmt.Errorf("live bytes %d, records hold %d", sh.live, live)
	case n != sh.idx.count:
		return fmt.Errorf("index counts %d entries, ring has %d live records", sh.idx.count, n)
	case expiring != sh.expiring:
		return fmt.Errorf("expiring counter %d, ring has %d", sh.expiring, expiring)
	}
	for c := range items {
		if items[c] != sh.cls[c].items {
			return fmt.Errorf("class %d: counter %d items, ring has %d", c, sh.cls[c].items, items[c])
		}
		if temps[c] != sh.cls[c].temp {
			return fmt.Errorf("class %d: counter %d temporary items, ring has %d", c, sh.cls[c].temp, temps[c])
		}
	}
	used := sh.head - sh.tail
	if sh.wrapped {
		used = sh.end - sh.tail + sh.head
	}
	if used < live || used > len(sh.buf) {
		return fmt.Errorf("ring span %d bytes for %d live bytes (ring %d)", used, live, len(sh.buf))
	}
	return nil
}

func tagOfKey(key []byte) uint32 { return tagOf(xxhash.Sum64(key)) }

func sleepTick() { time.Sleep(clockTick) }
