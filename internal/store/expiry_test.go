package store

import (
	"testing"
	"time"
)

func TestExpiryRules(t *testing.T) {
	const now = 1_700_000_000
	tests := []struct {
		name      string
		exptime   int64
		after     int64 // seconds to advance before the get
		wantHit   bool
		wantAbsol int64 // Meta.Exptime right after the set (0 = never)
	}{
		{"zero never expires", 0, 10 * relativeExpiryLimit, true, 0},
		{"relative before expiry", 10, 9, true, now + 10},
		{"relative at expiry", 10, 10, false, now + 10},
		{"30 days is still relative", relativeExpiryLimit, relativeExpiryLimit - 1, true, now + relativeExpiryLimit},
		{"above 30 days is absolute (past)", relativeExpiryLimit + 1, 0, false, 0},
		{"absolute future", now + 100, 99, true, now + 100},
		{"absolute future reached", now + 100, 100, false, now + 100},
		{"negative is expired", -1, 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			clk.t.Store(now)
			s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
			if r := s.Set(ModeSet, []byte("k"), 0, tt.exptime, []byte("v"), 0); r != Stored {
				t.Fatalf("Set = %v", r)
			}
			if tt.wantAbsol != 0 {
				if _, m, ok := get(s, "k"); !ok || m.Exptime != tt.wantAbsol {
					t.Fatalf("right after set: hit %v exptime %d, want %d", ok, m.Exptime, tt.wantAbsol)
				}
			}
			clk.advance(tt.after)
			if _, _, ok := get(s, "k"); ok != tt.wantHit {
				t.Fatalf("get after %ds hit = %v, want %v", tt.after, ok, tt.wantHit)
			}
			checkInvariants(t, s)
		})
	}
}

func TestTouchAndGAT(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
	s.Set(ModeSet, []byte("k"), 0, 5, []byte("v"), 0)
	if !s.Touch([]byte("k"), 100) {
		t.Fatal("touch of a live key missed")
	}
	clk.advance(50)
	var got string
	if !s.GetAndTouch([]byte("k"), 0, func(v []byte, m Meta) { got = string(v) }) || got != "v" {
		t.Fatalf("gat = %q", got)
	}
	clk.advance(10 * relativeExpiryLimit)
	if _, m, ok := get(s, "k"); !ok || m.Exptime != 0 {
		t.Fatalf("gat 0 should make the item permanent: hit %v exptime %d", ok, m.Exptime)
	}
	// gat with a negative exptime returns the value once, then it is gone.
	if !s.GetAndTouch([]byte("k"), -1, func([]byte, Meta) {}) {
		t.Fatal("gat -1 missed a live item")
	}
	if _, _, ok := get(s, "k"); ok {
		t.Fatal("item still there after gat -1")
	}
	if s.Touch([]byte("k"), 10) || s.GetAndTouch([]byte("k"), 10, func([]byte, Meta) {}) {
		t.Fatal("touch/gat of a missing key hit")
	}
	st := s.Stats()
	want := Stats{CmdTouch: 5, TouchHits: 3, TouchMisses: 2, CmdGet: 2, GetHits: 1, GetMisses: 1, GetExpired: 1}
	if st.CmdTouch != want.CmdTouch || st.TouchHits != want.TouchHits || st.TouchMisses != want.TouchMisses ||
		st.CmdGet != want.CmdGet || st.GetHits != want.GetHits || st.GetMisses != want.GetMisses ||
		st.GetExpired != want.GetExpired {
		t.Fatalf("stats %+v, want touch/get counters of %+v", st, want)
	}
	checkInvariants(t, s)
}

func TestFlushAll(t *testing.T) {
	tests := []struct {
		name  string
		noCAS bool // -C: memcached's flush has only whole seconds to go by
		delay int64
		// times (seconds after the flush command) of extra sets, and whether
		// each of those keys is visible at check time
		laterSets []int64
		checkAt   int64
		wantOld   bool // an item stored before the command
		wantLater []bool
	}{
		// With CAS, the flush is exact: items stored after it, even in the
		// same second, stay (memcached's oldest_cas).
		{"immediate", false, 0, []int64{0, 1}, 2, false, []bool{true, true}},
		{"negative delay is immediate", false, -5, []int64{0}, 0, false, []bool{true}},
		{"delay not yet due", false, 10, nil, 8, true, nil},
		// memcached's oldest_live is now+delay-1: at that second, items stored
		// at or before it vanish, including ones stored after the command.
		{"delay due", false, 10, []int64{5, 9, 10}, 10, false, []bool{false, false, true}},
		{"delay due later", false, 10, []int64{5}, 100, false, []bool{false}},
		// A delay of 1 makes oldest_live now: in force at once, and it takes
		// the rest of the second with it.
		{"delay 1", false, 1, []int64{0, 1}, 1, false, []bool{false, true}},
		// Under -C, oldest_live is now (or now+delay): the rest of the
		// flush's second is flushed too (flush-all.t's last test).
		{"-C immediate", true, 0, []int64{0, 1}, 2, false, []bool{false, true}},
		{"-C delay not yet due", true, 10, nil, 9, true, nil},
		{"-C delay due", true, 10, []int64{5, 10, 11}, 11, false, []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			start := clk.Now()
			s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now, DisableCAS: tt.noCAS})
			set(s, "old", "v")
			s.FlushAll(tt.delay)
			keys := make([]string, len(tt.laterSets))
			for i, at := range tt.laterSets {
				clk.t.Store(start + at)
				keys[i] = string(rune('a' + i))
				set(s, keys[i], "v")
			}
			clk.t.Store(start + tt.checkAt)
			if _, _, ok := get(s, "old"); ok != tt.wantOld {
				t.Errorf("old item visible = %v, want %v", ok, tt.wantOld)
			}
			for i, k := range keys {
				if _, _, ok := get(s, k); ok != tt.wantLater[i] {
					t.Errorf("item stored at +%ds visible = %v, want %v", tt.laterSets[i], ok, tt.wantLater[i])
				}
			}
			checkInvariants(t, s)
		})
	}
}

func TestFlushCounters(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
	set(s, "a", "1")
	set(s, "b", "2")
	get(s, "a")
	s.FlushAll(0)
	// Lazy, as memcached: the items stay until met, and a get counts get_flushed.
	st := s.Stats()
	if st.CurrItems != 2 || st.CmdFlush != 1 || st.Reclaimed != 0 {
		t.Fatalf("after flush_all: %+v", st)
	}
	if _, _, ok := get(s, "a"); ok {
		t.Fatal("flushed item visible")
	}
	s.Crawl() // lru_crawler crawl reclaims the rest
	st = s.Stats()
	if st.CurrItems != 0 || st.Bytes != 0 || st.GetFlushed != 1 || st.GetMisses != 1 || st.Reclaimed != 1 || st.ExpiredUnfetched != 1 {
		t.Fatalf("after a get and a crawl: %+v", st)
	}
	set(s, "c", "3")
	s.FlushAll(3)
	clk.advance(2)
	get(s, "c")
	if st := s.Stats(); st.GetFlushed != 2 || st.CurrItems != 0 {
		t.Fatalf("after delayed flush took effect: get_flushed %d curr_items %d", st.GetFlushed, st.CurrItems)
	}
}

func TestReclaimer(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 4 << 20, Now: clk.Now})
	const n = 5000
	for i := range n {
		exp := int64(0)
		if i%2 == 0 {
			exp = 10
		}
		s.Set(ModeSet, []byte{byte(i), byte(i >> 8), 'k'}, 0, exp, []byte("value"), 0)
	}
	clk.advance(11)
	for range 1000 {
		s.reclaim(0, 1<<30)
		if s.Stats().CurrItems == n/2 {
			break
		}
	}
	st := s.Stats()
	if st.CurrItems != n/2 || st.Reclaimed != n/2 || st.ExpiredUnfetched != n/2 {
		t.Fatalf("after reclaiming: curr_items %d reclaimed %d expired_unfetched %d, want %d each",
			st.CurrItems, st.Reclaimed, st.ExpiredUnfetched, n/2)
	}
	checkInvariants(t, s)

	// A delayed flush is swept by the reclaimer once due, with no exptimes set.
	s.FlushAll(0)
	for i := range 100 {
		set(s, string(rune('A'+i)), "v")
	}
	s.FlushAll(2)
	clk.advance(1)
	s.reclaim(0, 1<<30)
	if st := s.Stats(); st.CurrItems < n/2 { // stores reclaim a few at the tail, no more
		t.Fatalf("flushed items swept before a lookup could meet them: curr_items %d", st.CurrItems)
	}
	clk.advance(flushSweepDelay)
	for range 100 {
		s.reclaim(0, 1<<30)
	}
	if st := s.Stats(); st.CurrItems != 0 {
		t.Fatalf("delayed flush not swept: curr_items %d", st.CurrItems)
	}
	checkInvariants(t, s)
}

func TestBackgroundReclaimerRuns(t *testing.T) {
	clk := newFakeClock()
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
	s.Set(ModeSet, []byte("k"), 0, 1, []byte("v"), 0)
	clk.advance(2)
	// The loop reclaims within a second (at once if a round is due);
	// a busy machine may delay it, not prevent it.
	for deadline := time.Now().Add(30 * time.Second); s.Stats().CurrItems != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("background reclaimer never removed the expired item")
		}
	}
}

// An item stored already expired (an absolute exptime in 1970) is left by
// the background reclaimer in the second it was stored, so the get that
// follows counts get_expired, as in memcached; a second later it goes.
func TestReclaimerLeavesItemsTouchedThisSecond(t *testing.T) {
	clk := newFakeClock()
	clk.t.Store(1_800_000_000)
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now})
	for _, k := range []string{"a", "b"} {
		if r := s.Set(ModeSet, []byte(k), 0, 2678400, []byte("v"), 0); r != Stored {
			t.Fatalf("Set %s = %v", k, r)
		}
	}
	s.reclaim(0, 1<<20)
	if _, _, ok := get(s, "a"); ok {
		t.Fatal("an expired item was returned")
	}
	if st := s.Stats(); st.GetExpired != 1 {
		t.Errorf("get_expired = %d after the reclaimer ran in the set's second, want 1", st.GetExpired)
	}
	clk.t.Add(1)
	s.reclaim(0, 1<<20)
	if st := s.Stats(); st.CurrItems != 0 {
		t.Errorf("curr_items = %d a second later, want 0 (reclaimed)", st.CurrItems)
	}
}

// With memcached's LRU crawler off the reclaimer leaves expired items in
// place, chunks and all, until the crawler is turned on (lru-crawler.t
// counts the used chunks of 1 s items well after they expired).
func TestReclaimerIdleWhileCrawlerOff(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now, CrawlerOff: true})
	for i := range 30 {
		if r := s.Set(ModeSet, []byte{'s', byte(i)}, 0, 1, []byte("ok"), 0); r != Stored {
			t.Fatalf("Set = %v", r)
		}
	}
	clk.advance(3)
	for range 10 {
		s.reclaim(0, 1<<20)
	}
	if st := s.Stats(); st.CurrItems != 30 || st.Reclaimed != 0 {
		t.Fatalf("crawler off: curr_items %d reclaimed %d, want 30 and 0", st.CurrItems, st.Reclaimed)
	}
	s.SetCrawler(true)
	for range 100 { // a pass may leave items a removal shifted behind it
		if s.reclaim(0, 1<<20); s.Stats().CurrItems == 0 {
			break
		}
	}
	if st := s.Stats(); st.CurrItems != 0 || st.Reclaimed != 30 {
		t.Fatalf("crawler on: curr_items %d reclaimed %d, want 0 and 30", st.CurrItems, st.Reclaimed)
	}
	checkInvariants(t, s)
}

// Without the LRU maintainer (-o no_lru_maintainer) nothing schedules
// memcached's crawler, enabled or not: expired items stay until met.
func TestReclaimerIdleWithoutMaintainer(t *testing.T) {
	clk := newFakeClock()
	s := newManualStore(t, Config{MemoryLimit: 1 << 20, Now: clk.Now, PlainLRU: true})
	s.SetCrawler(true)
	if r := s.Set(ModeSet, []byte("k"), 0, 1, []byte("ok"), 0); r != Stored {
		t.Fatalf("Set = %v", r)
	}
	clk.advance(3)
	s.reclaim(0, 1<<20)
	if st := s.Stats(); st.CurrItems != 1 {
		t.Fatalf("curr_items %d, want the expired item left in place", st.CurrItems)
	}
	if _, _, ok := get(s, "k"); ok {
		t.Fatal("an expired item was returned")
	}
}
