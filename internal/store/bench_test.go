package store

import (
	"fmt"
	"sync/atomic"
	"testing"
)

const benchKeys = 1 << 16

func benchStore(b *testing.B) (*Store, [][]byte) {
	s := newTestStore(b, Config{MemoryLimit: 64 << 20})
	keys := make([][]byte, benchKeys)
	v := make([]byte, 100)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "bench:key:%08d", i)
		if r := s.Set(ModeSet, keys[i], 0, 0, v, 0); r != Stored {
			b.Fatalf("set = %v", r)
		}
	}
	return s, keys
}

var sink int

func BenchmarkGetHit(b *testing.B) {
	s, keys := benchStore(b)
	fn := func(v []byte, _ Meta) { sink += len(v) }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if !s.Get(keys[i&(benchKeys-1)], fn) {
			b.Fatal("miss")
		}
	}
}

func BenchmarkGetHitParallel(b *testing.B) {
	s, keys := benchStore(b)
	var seed atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seed.Add(7919))
		n := 0
		fn := func(v []byte, _ Meta) { n += len(v) }
		for pb.Next() {
			s.Get(keys[i&(benchKeys-1)], fn)
			i++
		}
	})
}

func BenchmarkGetMiss(b *testing.B) {
	s, _ := benchStore(b)
	k := []byte("bench:missing:key")
	fn := func([]byte, Meta) {}
	b.ReportAllocs()
	for b.Loop() {
		s.Get(k, fn)
	}
}

// BenchmarkSet overwrites keys of a full working set; the ring recycles
// the dead records, which is the steady state of a cache.
func BenchmarkSet(b *testing.B) {
	s, keys := benchStore(b)
	v := make([]byte, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.Set(ModeSet, keys[i&(benchKeys-1)], 0, 0, v, 0)
	}
}

func BenchmarkSetParallel(b *testing.B) {
	s, keys := benchStore(b)
	var seed atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seed.Add(7919))
		v := make([]byte, 100)
		for pb.Next() {
			s.Set(ModeSet, keys[i&(benchKeys-1)], 0, 0, v, 0)
			i++
		}
	})
}

// BenchmarkSetEvicting writes new keys into a store far smaller than them.
func BenchmarkSetEvicting(b *testing.B) {
	s := newTestStore(b, Config{MemoryLimit: 8 << 20})
	v := make([]byte, 100)
	k := []byte("bench:evict:00000000")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n := i
		for j := len(k) - 1; j >= len(k)-8; j-- {
			k[j] = byte('0' + n%10)
			n /= 10
		}
		s.Set(ModeSet, k, 0, 0, v, 0)
	}
}

func BenchmarkIncr(b *testing.B) {
	s := newTestStore(b, Config{MemoryLimit: 8 << 20})
	k := []byte("counter")
	set(s, k2s(k), "0")
	b.ReportAllocs()
	for b.Loop() {
		s.IncrDecr(k, 1, false)
	}
}

func k2s(k []byte) string { return string(k) }

// BenchmarkGetHitHot reads 1024 keys whose records stay in cache: the CPU
// cost of a hit without the memory latency BenchmarkGetHit includes.
func BenchmarkGetHitHot(b *testing.B) {
	s, keys := benchStore(b)
	fn := func(v []byte, _ Meta) { sink += len(v) }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.Get(keys[i&1023], fn)
	}
}

// BenchmarkClassesAfterOverwrites is `stats items` / `stats slabs` on a
// ring whose tail is a million overwritten (dead) records: Classes must not
// walk them all to find oldestScan live ones.
func BenchmarkClassesAfterOverwrites(b *testing.B) {
	s := newTestStore(b, Config{MemoryLimit: 1 << 30})
	v := make([]byte, 100)
	for i := range 1 << 20 {
		s.Set(ModeSet, fmt.Appendf(nil, "ow:%d", i%100), 0, 0, v, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if len(s.Classes()) == 0 {
			b.Fatal("no classes")
		}
	}
}
