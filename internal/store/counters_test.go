package store

import (
	"fmt"
	"strings"
	"testing"
)

// evictions.t: items stored with an exptime and then evicted count as
// evicted_nonzero in their class; items without one do not.
func TestEvictedNonzeroCounted(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 3 << 20, MaxItemSize: 1 << 20})
	value := strings.Repeat("B", 66560)
	for i := range 40 {
		s.Set(ModeSet, []byte(fmt.Sprintf("key%d", i)), 0, 0, []byte(value), 0)
	}
	var evicted, nonzero uint64
	for _, c := range s.Classes() {
		evicted += c.Evicted
		nonzero += c.EvictedNonzero
	}
	if nonzero != 0 {
		t.Fatalf("without exptime: evicted %d, evicted_nonzero %d; want 0", evicted, nonzero)
	}
	for i := range 50 {
		s.Set(ModeSet, []byte(fmt.Sprintf("key%d", i)), 0, 600, []byte(value), 0)
	}
	evicted, nonzero = 0, 0
	for _, c := range s.Classes() {
		evicted += c.Evicted
		nonzero += c.EvictedNonzero
	}
	if nonzero == 0 || nonzero > evicted {
		t.Fatalf("with exptime: evicted %d, evicted_nonzero %d", evicted, nonzero)
	}
}

// stats.t: a set whose exptime is already past (negative, or an absolute
// time before now) is stored, as memcached stores it; the next get misses
// and counts get_expired.
func TestStoreAlreadyExpiredCountsGetExpired(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
	for i, exp := range []int64{-1, 2678400} {
		key := fmt.Sprintf("k%d", i)
		if r := s.Set(ModeSet, []byte(key), 0, exp, []byte("abc"), 0); r != Stored {
			t.Fatalf("exptime %d: %v", exp, r)
		}
		if st := s.Stats(); st.CurrItems != 1 || st.TotalItems != uint64(i+1) || st.Reclaimed != 0 {
			t.Fatalf("exptime %d: curr_items %d total_items %d reclaimed %d", exp, st.CurrItems, st.TotalItems, st.Reclaimed)
		}
		if _, _, ok := get(s, key); ok {
			t.Fatalf("exptime %d: expired item returned", exp)
		}
		if st := s.Stats(); st.CurrItems != 0 || st.GetExpired != uint64(i+1) {
			t.Fatalf("exptime %d: curr_items %d get_expired %d", exp, st.CurrItems, st.GetExpired)
		}
	}
	checkInvariants(t, s)
}

// lru-crawler.t: a size class whose items have all gone keeps its page in
// `stats slabs` (memcached keeps a class's slab pages), so used_chunks 0 is
// still listed.
func TestEmptiedClassKeepsItsPage(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
	for i := range 30 {
		s.Set(ModeSet, []byte(fmt.Sprintf("sfoo%d", i)), 0, 1, []byte("ok"), 0)
	}
	clk.advance(3)
	for next, i := 0, 0; i < 100 && s.Stats().CurrItems != 0; i++ {
		next, _ = s.reclaim(next, 1<<20)
	}
	s.ResetStats()
	var found bool
	for _, c := range s.Classes() {
		if c.Items == 0 && c.UsedChunks == 0 && c.TotalPages == 1 {
			found = true
		}
	}
	if st := s.Stats(); st.CurrItems != 0 || !found {
		t.Fatalf("curr_items %d, classes %+v: want an emptied class with one page", st.CurrItems, s.Classes())
	}
}

// lru-crawler.t: Crawl reclaims the expired items at once and counts them as
// crawler_reclaimed in their class.
func TestCrawlReclaimsExpired(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
	for i := range 30 {
		s.Set(ModeSet, []byte(fmt.Sprintf("ifoo%d", i)), 0, 0, []byte("ok"), 0)
		s.Set(ModeSet, []byte(fmt.Sprintf("lfoo%d", i)), 0, 3600, []byte("ok"), 0)
		s.Set(ModeSet, []byte(fmt.Sprintf("sfoo%d", i)), 0, 1, []byte("ok"), 0)
	}
	clk.advance(3)
	s.Crawl()
	var items, crawled uint64
	for _, c := range s.Classes() {
		items += c.UsedChunks
		crawled += c.CrawlerReclaimed
	}
	if items != 60 || crawled != 30 {
		t.Fatalf("after crawl: used_chunks %d crawler_reclaimed %d, want 60 30", items, crawled)
	}
	// The crawl looked at all 90 items; `stats` sums the classes.
	if st := s.Stats(); st.CrawlerReclaimed != 30 || st.CrawlerItemsChecked != 90 {
		t.Fatalf("stats: crawler_reclaimed %d crawler_items_checked %d, want 30 90", st.CrawlerReclaimed, st.CrawlerItemsChecked)
	}
	checkInvariants(t, s)
}

// `stats reset` clears what memcached's clears: its per-class item stats
// (the LRU's moves, direct reclaims, the crawler's counts) and its global
// stats (lru_maintainer_juggles), not only the shards' counters.
func TestResetStatsClearsLRUCounters(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
	value := make([]byte, 3000)
	for i := range 1000 { // past -m: evictions, direct reclaims, moves to COLD
		s.Set(ModeSet, []byte(fmt.Sprintf("k%d", i)), 0, 0, value, 0)
	}
	s.maintain(clampTime(clk.Now()))
	s.Crawl()
	st := s.Stats()
	if st.MovesToCold == 0 || st.DirectReclaims == 0 || st.LRUMaintainerJuggles == 0 || st.CrawlerItemsChecked == 0 {
		t.Fatalf("before the reset: moves_to_cold %d direct_reclaims %d juggles %d crawler_items_checked %d: want all counted",
			st.MovesToCold, st.DirectReclaims, st.LRUMaintainerJuggles, st.CrawlerItemsChecked)
	}
	s.ResetStats()
	st = s.Stats()
	if st.MovesToCold+st.MovesToWarm+st.MovesWithinLRU+st.DirectReclaims+st.LRUMaintainerJuggles+st.CrawlerItemsChecked != 0 {
		t.Fatalf("after the reset: moves_to_cold %d moves_to_warm %d moves_within_lru %d direct_reclaims %d juggles %d crawler_items_checked %d",
			st.MovesToCold, st.MovesToWarm, st.MovesWithinLRU, st.DirectReclaims, st.LRUMaintainerJuggles, st.CrawlerItemsChecked)
	}
	for _, c := range s.Classes() {
		if c.MovesToCold+c.DirectReclaims+c.CrawlerItemsChecked != 0 {
			t.Fatalf("class %d after the reset: %+v", c.ID, c)
		}
	}
	checkInvariants(t, s)
}

// issue_42.t: mem_requested is the items' sizes as memcached counts them
// (ITEM_ntotal), per class, following sets, overwrites and deletes.
func TestMemRequested(t *testing.T) {
	tests := []struct {
		name  string
		noCAS bool
		flags uint32
		want  uint64 // per item: 48 + key+1 + value+2 (+4 flags) (+8 CAS)
	}{
		{"cas", false, 0, 48 + 5 + 12 + 8},
		{"cas and flags", false, 7, 48 + 5 + 12 + 4 + 8},
		{"-C", true, 0, 48 + 5 + 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 1 << 20, DisableCAS: tt.noCAS})
			for i := range 10 {
				s.Set(ModeSet, []byte(fmt.Sprint("key", i)), tt.flags, 0, []byte("BBBBBBBBBB"), 0)
			}
			s.Set(ModeSet, []byte("key0"), tt.flags, 0, []byte("BBBBBBBBBB"), 0) // an overwrite
			s.Delete([]byte("key9"))
			var got uint64
			for _, c := range s.Classes() {
				got += c.MemRequested
			}
			if got != 9*tt.want {
				t.Fatalf("mem_requested %d, want %d", got, 9*tt.want)
			}
		})
	}
}

// Under -M, items flushed but not yet met still count as live; a store
// that finds the ring full unlinks them first instead of failing, as
// memcached reclaims flushed items before it answers out of memory.
func TestNoEvictReclaimsFlushed(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 2 << 20, MaxItemSize: 64 << 10, DisableEvictions: true})
	value := strings.Repeat("v", 1000)
	stored := 0
	for i := 0; s.Set(ModeSet, []byte(fmt.Sprint("k", i)), 0, 0, []byte(value), 0) == Stored; i++ {
		stored++
	}
	s.FlushAll(0)
	// Other keys land in other shards than the first ones did: take half,
	// which no shard's share can push past its ring.
	for i := range stored / 2 {
		if res := s.Set(ModeSet, []byte(fmt.Sprint("n", i)), 0, 0, []byte(value), 0); res != Stored {
			t.Fatalf("set %d of %d after flush_all: %v", i, stored, res)
		}
	}
	checkInvariants(t, s)
}

// issue_183.t: a store soon after flush_all reclaims a flushed item at the
// ring's tail (reclaimed, not get_flushed), as memcached's allocation pulls
// its LRU's tail before it stores.
func TestStoreAfterFlushReclaims(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
	set(s, "key", "1")
	clk.advance(2)
	s.FlushAll(0)
	set(s, "key", "1")
	if st := s.Stats(); st.Reclaimed != 1 || st.GetFlushed != 0 || st.CurrItems != 1 {
		t.Fatalf("reclaimed %d get_flushed %d curr_items %d, want 1 0 1", st.Reclaimed, st.GetFlushed, st.CurrItems)
	}
	checkInvariants(t, s)
}

// restart.t: hash_power_level starts at 16 (or -o hashpower) and grows by
// one once items outnumber 1.5 per bucket, as memcached's hash table does;
// deleting the items does not shrink it.
func TestHashPowerLevel(t *testing.T) {
	tests := []struct {
		name     string
		power    int
		noExpand bool
		items    int
		want     uint64
	}{
		{"default", 0, false, 0, 16},
		{"-o hashpower", 12, false, 0, 12},
		{"at 1.5 per bucket", 12, false, 6144, 12},
		{"past 1.5 per bucket", 12, false, 6145, 13},
		{"two levels", 12, false, 12289, 14},
		{"no_hashexpand", 12, true, 12289, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 8 << 20, HashPower: tt.power, NoHashExpand: tt.noExpand})
			for i := range tt.items {
				set(s, fmt.Sprint("k", i), "v")
			}
			s.hashExpand()
			if got := s.Stats().HashPowerLevel; got != tt.want {
				t.Fatalf("hash_power_level %d, want %d", got, tt.want)
			}
			for i := range tt.items {
				s.Delete([]byte(fmt.Sprint("k", i)))
			}
			s.hashExpand()
			if got := s.Stats().HashPowerLevel; got != tt.want {
				t.Fatalf("after deleting: hash_power_level %d, want %d", got, tt.want)
			}
		})
	}
}
