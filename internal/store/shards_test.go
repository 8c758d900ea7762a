package store

import (
	"runtime"
	"testing"
)

func TestShardCount(t *testing.T) {
	byCPUs := 16
	for byCPUs < 16*runtime.GOMAXPROCS(0) && byCPUs < maxShards {
		byCPUs *= 2
	}
	for _, c := range []struct{ asked, want int }{
		{0, byCPUs}, {-1, byCPUs},
		{1, 1}, {2, 2}, {3, 4}, {17, 32}, {256, 256}, {1000, maxShards},
	} {
		if got := shardCount(c.asked); got != c.want {
			t.Errorf("shardCount(%d) = %d, want %d", c.asked, got, c.want)
		}
	}
}

// TestShardsAsked: a store asked for few shards has that many, and CAS
// uniques still never repeat across them.
func TestShardsAsked(t *testing.T) {
	s, err := New(Config{MemoryLimit: 4 << 20, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.shards) != 2 {
		t.Fatalf("%d shards, want 2", len(s.shards))
	}
	seen := map[uint64]string{}
	for i := range 64 {
		key := []byte{'k', byte('a' + i%26), byte('a' + i/26)}
		if r := s.Set(ModeSet, key, 0, 0, []byte("v"), 0); r != Stored {
			t.Fatalf("set %s: %v", key, r)
		}
		var cas uint64
		if !s.Get(key, func(_ []byte, m Meta) { cas = m.CAS }) {
			t.Fatalf("%s not stored", key)
		}
		if prev, dup := seen[cas]; dup {
			t.Fatalf("CAS %d given to %s and %s", cas, prev, key)
		}
		seen[cas] = string(key)
	}
}
