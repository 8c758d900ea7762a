package store

import (
	"bytes"
	"fmt"
	"testing"
)

func key(i int) []byte { return fmt.Appendf(nil, "key:%d", i) }

// value returns a value of n bytes that encodes i, so reads can be checked.
func value(i, n int) []byte {
	v := bytes.Repeat([]byte{byte('a' + i%26)}, n)
	copy(v, fmt.Appendf(nil, "%d:", i))
	return v
}

func TestEvictionBoundsMemory(t *testing.T) {
	tests := []struct {
		name     string
		memory   int64
		valueLen int
		items    int
	}{
		{"small values -m 1", 1 << 20, 100, 50_000},
		{"1k values -m 4", 4 << 20, 1000, 20_000},
		{"mixed sizes -m 8", 8 << 20, 0, 20_000}, // 0: size varies with i
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: tt.memory, MaxItemSize: 64 << 10})
			for i := range tt.items {
				n := tt.valueLen
				if n == 0 {
					n = 1 + (i*7919)%(32<<10)
				}
				if r := s.Set(ModeSet, key(i), 0, 0, value(i, n), 0); r != Stored {
					t.Fatalf("set %d = %v", i, r)
				}
			}
			st := s.Stats()
			if st.Evictions == 0 {
				t.Fatalf("no evictions after writing far more than -m: %+v", st)
			}
			if st.Bytes > st.TotalMallocedBytes || st.TotalMallocedBytes > itemBound(s, tt.memory) {
				t.Fatalf("bytes %d / malloced %d exceed -m %d and a page per class", st.Bytes, st.TotalMallocedBytes, tt.memory)
			}
			if st.CurrItems+st.Evictions != uint64(tt.items) {
				t.Fatalf("curr_items %d + evictions %d != %d stored", st.CurrItems, st.Evictions, tt.items)
			}
			// The newest item always survives; whatever survives is intact.
			if _, _, ok := get(s, string(key(tt.items-1))); !ok {
				t.Fatal("the last item stored was evicted")
			}
			for i := range tt.items {
				n := tt.valueLen
				if n == 0 {
					n = 1 + (i*7919)%(32<<10)
				}
				s.Get(key(i), func(v []byte, _ Meta) {
					if !bytes.Equal(v, value(i, n)) {
						t.Fatalf("item %d holds %q...", i, v[:min(len(v), 16)])
					}
				})
			}
			checkInvariants(t, s)
		})
	}
}

// Items read regularly survive a stream of one-off writes (second chance).
// The maintainer runs every 1,000 writes and the clock turns every 20,000,
// driven here rather than left to the scheduler: which items survive
// depends on when the maintainer meets them.
func TestEvictionKeepsHotItems(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
	const hot = 200
	for i := range hot {
		s.Set(ModeSet, key(i), 0, 0, value(i, 100), 0)
	}
	for i := hot; i < 100_000; i++ {
		s.Set(ModeSet, key(i), 0, 0, value(i, 100), 0)
		if i%100 == 0 {
			for h := range hot {
				s.Get(key(h), func([]byte, Meta) {})
			}
		}
		if i%20_000 == 0 {
			clk.advance(1)
		}
		if i%1000 == 0 {
			s.maintain(clampTime(clk.Now()))
		}
	}
	lost := 0
	for h := range hot {
		if !s.Get(key(h), func([]byte, Meta) {}) {
			lost++
		}
	}
	if lost > hot/20 {
		t.Fatalf("%d of %d hot items evicted", lost, hot)
	}
	checkInvariants(t, s)
}

func TestDisableEvictions(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, DisableEvictions: true})
	stored, r := fillUntilRefused(t, s, 10_000, key, func(i int) []byte { return value(i, 1000) })
	if r != OutOfMemory {
		t.Fatalf("set %d = %v, want out of memory", stored, r)
	}
	st := s.Stats()
	if st.Evictions != 0 || st.OutOfMemory != 1 || st.CurrItems != uint64(stored) {
		t.Fatalf("-M: evictions %d outofmemory %d curr_items %d (stored %d)", st.Evictions, st.OutOfMemory, st.CurrItems, stored)
	}
	if per := pageSize / s.slabs.classes[s.ItemClass(len(key(0)), 1000, 0)].size; stored != per {
		t.Fatalf("%d items fit in the 1 MiB page of a class that holds %d", stored, per)
	}
	for i := range stored {
		if _, _, ok := get(s, string(key(i))); !ok {
			t.Fatalf("item %d lost under -M", i)
		}
	}
	// Deleting makes room again, and rewriting one key forever never runs out:
	// dead records are compacted away from behind live ones.
	for i := 0; i < stored; i += 2 {
		s.Delete(key(i))
	}
	for j := range 20_000 {
		if r := s.Set(ModeSet, []byte("churn"), 0, 0, value(j, 1000), 0); r != Stored {
			t.Fatalf("rewrite %d of one key under -M = %v", j, r)
		}
	}
	for i := 1; i < stored; i += 2 {
		if _, _, ok := get(s, string(key(i))); !ok {
			t.Fatalf("item %d lost while compacting", i)
		}
	}
	checkInvariants(t, s)
}

func TestLargeItems(t *testing.T) {
	tests := []struct {
		name    string
		memory  int64
		maxItem int
	}{
		{"-m 64 -I 1m", 64 << 20, 1 << 20},
		{"-m 64 -I 32m", 64 << 20, 32 << 20},
		{"-m 2 -I 1m", 2 << 20, 1 << 20},
		{"-m 1 -I 1m (clamped to half)", 1 << 20, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: tt.memory, MaxItemSize: tt.maxItem})
			k := []byte("large-key-with-some-length")
			maxV := s.MaxValueSize(len(k), 0)
			if maxV < min(tt.maxItem, int(tt.memory/2))-512 {
				t.Fatalf("MaxValueSize = %d, far below -I %d", maxV, tt.maxItem)
			}
			if r := s.Set(ModeSet, k, 0, 0, make([]byte, maxV+1), 0); r != TooLarge {
				t.Fatalf("value of MaxValueSize+1 = %v, want TooLarge", r)
			}
			// Store items at the limit over and over: each must be storable,
			// evicting older ones as needed. Four rounds of 32 MB items
			// evict twice; more would only add seconds of copying under -race.
			rounds := 9
			if maxV > 8<<20 {
				rounds = 4
			}
			for i := range rounds {
				kk := append(k[:len(k)-2:len(k)-2], byte('a'+i), 'z')
				want := value(i, maxV)
				if r := s.Set(ModeSet, kk, 0, 0, want, 0); r != Stored {
					t.Fatalf("large item %d = %v", i, r)
				}
				if !s.Get(kk, func(v []byte, _ Meta) {
					if len(v) != maxV || !bytes.Equal(v, want) {
						t.Fatalf("large item %d read back wrong (%d bytes)", i, len(v))
					}
				}) {
					t.Fatalf("large item %d missing right after set", i)
				}
				checkInvariants(t, s)
			}
		})
	}
}

func TestClasses(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 8 << 20})
	sizes := []int{10, 100, 1000, 10_000}
	for i, n := range sizes {
		for j := range 10 {
			s.Set(ModeSet, fmt.Appendf(nil, "c%d:%d", i, j), 0, 0, make([]byte, n), 0)
		}
		s.Get(fmt.Appendf(nil, "c%d:0", i), func([]byte, Meta) {})
	}
	classes := s.Classes()
	if len(classes) != len(sizes) {
		t.Fatalf("%d classes in use, want %d: %+v", len(classes), len(sizes), classes)
	}
	var items, bytes uint64
	for i, c := range classes {
		if c.Items != 10 || c.CmdSet != 10 || c.GetHits != 1 {
			t.Errorf("class %d: items %d cmd_set %d get_hits %d, want 10, 10, 1", c.ID, c.Items, c.CmdSet, c.GetHits)
		}
		if c.ChunkSize < recSize(5, sizes[i]) || c.ChunksPer*c.ChunkSize > pageSize {
			t.Errorf("class %d: chunk size %d for %d-byte values, %d per page", c.ID, c.ChunkSize, sizes[i], c.ChunksPer)
		}
		if i > 0 && c.ID <= classes[i-1].ID {
			t.Errorf("classes out of order: %d after %d", c.ID, classes[i-1].ID)
		}
		items += c.Items
		bytes += c.MemRequested
	}
	if st := s.Stats(); st.CurrItems != items || st.Bytes != bytes {
		t.Fatalf("classes sum to %d items / %d bytes, stats say %d / %d", items, bytes, st.CurrItems, st.Bytes)
	}
}

func TestClassTable(t *testing.T) {
	for _, maxRecord := range []int{1 << 10, 1 << 20, 64 << 20} {
		ct := newClassTable(maxRecord, 0, 0, nil)
		if len(ct.sizes) > 255 {
			t.Fatalf("%d classes do not fit the uint8 table", len(ct.sizes))
		}
		for size := 8; size <= maxRecord; size += 8 {
			c := ct.classOf(size)
			if ct.sizes[c] < size || (c > 1 && ct.sizes[c-1] >= size) {
				t.Fatalf("max %d: size %d -> class %d (chunk %d)", maxRecord, size, c, ct.sizes[c])
			}
			if size > smallSizes {
				size += 4088 // sample the large sizes
			}
		}
	}
}

// As memcached's segmented LRU: a key read once is evicted like one never
// read, a key read twice moves to WARM at HOT's tail and survives a stream
// of stores; without it (PlainLRU, memcached's -o no_lru_maintainer) reads
// within a minute of the item's last move do not move it, so neither
// survives.
func TestEvictionNeedsTwoReads(t *testing.T) {
	for _, plain := range []bool{false, true} {
		// A clock that stands still: the maintainer then moves WARM's
		// items down by bytes only, not by age, whatever the scheduling.
		clock := newFakeClock()
		s := newTestStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 256 << 10, PlainLRU: plain, Now: clock.Now})
		set(s, "once", string(value(1, 1000)))
		set(s, "twice", string(value(2, 1000)))
		get(s, "once")
		get(s, "twice")
		get(s, "twice")
		for i := 0; i < 3000; i++ { // three times what the class's page holds
			s.Set(ModeSet, key(i), 0, 0, value(i, 1000), 0)
		}
		_, _, once := get(s, "once")
		_, _, twice := get(s, "twice")
		if once || twice != !plain {
			t.Errorf("PlainLRU %v: read once survives %v (want false), read twice %v (want %v)", plain, once, twice, !plain)
		}
		checkInvariants(t, s)
	}
}

// A juggle that cannot read COLD's tail age (its shard is busy) moves WARM
// items by size only: a WARM item read seconds ago stays, as it does when
// the age is known and large enough.
func TestJuggleKeepsWarmWhenColdAgeUnknown(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 8 << 20, MaxItemSize: 64 << 10, Now: clk.Now, Shards: 2})
	// The canary lives in the other shard than COLD's tail will (key(0),
	// the oldest item), so holding that shard blocks only the age reading.
	tailShard, _ := s.shardFor(key(0))
	canary := ""
	for i := 0; canary == ""; i++ {
		if sh, _ := s.shardFor([]byte(fmt.Sprint("canary", i))); sh != tailShard {
			canary = fmt.Sprint("canary", i)
		}
	}
	set(s, canary, string(value(1, 1000)))
	get(s, canary)
	get(s, canary) // twice: active
	for i := range 200 {
		s.Set(ModeSet, key(i), 0, 0, value(i, 1000), 0)
	}
	s.maintain(clampTime(clk.Now())) // the canary to WARM, the rest down to COLD
	id := 0
	for _, c := range s.Classes() {
		if c.Items > 0 {
			id = c.ID
		}
	}
	c := &s.slabs.classes[id]
	warm := func() uint64 { return uint64(c.q[queueWarm].items) }
	if warm() != 1 {
		t.Fatalf("after the first juggle: %d items in WARM, want the canary", warm())
	}
	if tail := c.q[queueCold].tail; tail == nilLoc || s.shardOf(s.slabs.rec(tail)) != tailShard {
		t.Fatal("COLD's tail is not key(0)")
	}
	clk.advance(5)
	tailShard.mu.Lock() // as a client storing there right now would
	s.juggle(c, clampTime(clk.Now()), nil)
	tailShard.mu.Unlock()
	if warm() != 1 {
		t.Errorf("with COLD's age unknown the juggle moved the canary out of WARM")
	}
	s.maintain(clampTime(clk.Now())) // age known: COLD's tail 5 s old, WARM's limit 10 s
	if warm() != 1 {
		t.Errorf("with COLD's tail as old as the canary the juggle moved it out of WARM")
	}
}
