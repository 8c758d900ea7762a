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
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
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
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
	for i := range 30 {
		s.Set(ModeSet, []byte(fmt.Sprintf("sfoo%d", i)), 0, 1, []byte("ok"), 0)
	}
	clk.advance(3)
	for next, i := 0, 0; i < 100 && s.Stats().CurrItems != 0; i++ {
		next = s.reclaim(next, 1<<20)
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
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10, Now: clk.Now})
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
	checkInvariants(t, s)
}
