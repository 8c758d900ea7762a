package store

import (
	"fmt"
	"sync"
	"testing"
)

// TestPrefetchAsksForTheRecord checks the hint's aim: for a key whose entry
// sits in its home slot or the one after, Prefetch asks for the record the
// locked lookup finds; for an absent or deleted key, for nothing.
func TestPrefetchAsksForTheRecord(t *testing.T) {
	if !prefetchSupported {
		t.Skip("Prefetch does nothing on this architecture")
	}
	s := newTestStore(t, Config{MemoryLimit: 16 << 20, Shards: 4})
	key := func(i int) []byte { return fmt.Appendf(nil, "prefetch:%d", i) }
	const n = 3000 // each shard's index grows past its first size
	for i := range n {
		if r := s.Set(ModeSet, key(i), 0, 0, []byte("value"), 0); r != Stored {
			t.Fatalf("set %d = %v", i, r)
		}
	}
	for i := 0; i < n; i += 3 {
		if !s.Delete(key(i)) {
			t.Fatalf("delete %d failed", i)
		}
	}
	near := 0
	for i := range n + 500 {
		k := key(i)
		probes := []indexProbe{s.probeFor(k, HashKey(k))}
		s.prefetchProbes(probes)
		got := probes[0].found
		sh, tag := s.shardFor(k)
		sh.mu.Lock()
		slot, home, mask := sh.find(k, tag), int(tag&sh.idx.mask), int(sh.idx.mask)
		want := noRecord
		if slot >= 0 {
			want = uint64(sh.posOf(slot))
		}
		sh.mu.Unlock()
		switch {
		case slot == home || slot == (home+1)&mask:
			near++
			if got != want {
				t.Errorf("key %q in slot %d (home %d): prefetched offset %d, record at %d", k, slot, home, got, want)
			}
		case slot < 0 && got != noRecord:
			t.Errorf("absent key %q: prefetched offset %d", k, got)
		}
	}
	if near < n/2 {
		t.Fatalf("only %d of %d live keys in or next to their home slot: the test checked too little", near, 2*n/3)
	}
}

// TestPrefetchIsAHint checks that gets after a Prefetch of their keys answer
// what they answered before, hits, misses and deleted keys alike.
func TestPrefetchIsAHint(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 16 << 20})
	var keys [][]byte
	for i := range 40 {
		k := fmt.Sprintf("hint:%d", i)
		keys = append(keys, []byte(k))
		switch i % 4 {
		case 0: // never stored
		case 1:
			set(s, k, "v"+k)
			s.Delete([]byte(k))
		default:
			set(s, k, "v"+k)
		}
	}
	type answer struct {
		value string
		meta  Meta
		hit   bool
	}
	ask := func() []answer {
		var as []answer
		for _, k := range keys {
			v, m, ok := get(s, string(k))
			as = append(as, answer{v, m, ok})
		}
		return as
	}
	before := ask()
	for i := 0; i < len(keys); i += prefetchBatch / 2 {
		prefetch(s, keys[i:min(i+prefetchBatch, len(keys))])
	}
	after := ask()
	for i := range keys {
		if before[i] != after[i] {
			t.Errorf("%s: %+v before Prefetch, %+v after", keys[i], before[i], after[i])
		}
	}
}

// TestPrefetchConcurrent runs Prefetch without locks against sets and
// deletes that grow every shard's index; under -race it shows the hint
// reads nothing the race detector sees shared. The writers' last word is
// what gets find after.
func TestPrefetchConcurrent(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20, Shards: 4})
	const writers, perWriter = 2, 6000
	key := func(w, i int) []byte { return fmt.Appendf(nil, "w%d:key:%d", w, i) }
	before := make([]int, len(s.shards))
	for i := range s.shards {
		before[i] = len(*s.shards[i].idx.published.Load())
	}
	var wg, readers sync.WaitGroup
	stop := make(chan struct{})
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			batch := make([][]byte, prefetchBatch)
			for round := 0; ; round++ {
				select {
				case <-stop:
					return
				default:
				}
				for j := range batch {
					batch[j] = key((r+j)%writers, (round*prefetchBatch+j)%perWriter)
				}
				prefetch(s, batch)
			}
		}()
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				s.Set(ModeSet, key(w, i), 0, 0, key(w, i), 0)
				if i%5 == 4 {
					s.Delete(key(w, i-2))
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	for i := range s.shards {
		if now := len(*s.shards[i].idx.published.Load()); now <= before[i] {
			t.Errorf("shard %d: index of %d slots never grew while prefetched", i, now)
		}
	}
	for w := range writers {
		for i := range perWriter {
			v, _, ok := get(s, string(key(w, i)))
			deleted := i%5 == 2 && i+2 < perWriter
			if ok == deleted || ok && v != string(key(w, i)) {
				t.Fatalf("%s: got %q, %v; deleted: %v", key(w, i), v, ok, deleted)
			}
		}
	}
}

// prefetch is Store.Prefetch with the hashes taken here.
func prefetch(s *Store, keys [][]byte) {
	hashes := make([]KeyHash, len(keys))
	for i, k := range keys {
		hashes[i] = HashKey(k)
	}
	s.Prefetch(keys, hashes)
}
