package store

import "testing"

// A flash header enters the LRU as a new item, as memcached links its
// header item: in HOT, last accessed when it was made, not when its value
// was last read. So the maintainer keeps recent headers out of COLD as it
// keeps any new item, and a page compacted for age finds headers out of
// COLD to rescue into the OLD bucket (extstore-tiered2.t).
func TestFlashHeaderIsNewToLRU(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	fillCold(t, s, clock, 20) // stored 40 s ago, accessed 40 s ago
	flushedAt := clampTime(clock.Now())
	if !s.MoveToFlash([]byte("k7")) {
		t.Fatal("k7 not moved to flash")
	}
	sh, tag := s.shardFor([]byte("k7"))
	sh.mu.Lock()
	r := sh.rec(sh.posOf(sh.find([]byte("k7"), tag)))
	accessed, queue, flash := r.accessed(), r.queue(), r.flash()
	sh.mu.Unlock()
	if !flash || accessed != flushedAt || queue != queueHot {
		t.Fatalf("k7's header: flash %v, accessed %d (flushed at %d), queue %d; want a flash header accessed at the flush, in HOT",
			flash, accessed, flushedAt, queue)
	}
	if v, _, ok := get(s, "k7"); !ok || v != string(flashValue(7)) {
		t.Fatalf("k7: hit %v, %d bytes", ok, len(v))
	}
	checkInvariants(t, s)
}

// A flash item whose second read bumps it out of COLD is still recached
// by that read (ext_recache_rate): memcached checks ITEM_ACTIVE when the
// read completes, before its maintainer has processed the bump that
// clears it (chunked-extstore.t's "recaching happening").
func TestRecacheAfterBumpFromCold(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStoreFor(t, clock, FlashConfig{Engine: fx.e, ItemSize: 512, RecacheRate: 1})
	putOnFlash(t, s, "k", 0, flashValue(1))
	maintainUntilIdle(s, clock)
	if q := queueOf(s, "k"); q != queueCold {
		t.Fatalf("k's header in queue %d, want COLD", q)
	}
	for i := range 2 {
		if v, _, ok := get(s, "k"); !ok || v != string(flashValue(1)) {
			t.Fatalf("read %d: hit %v, %d bytes", i, ok, len(v))
		}
	}
	if fs := s.FlashStats(); fs.RecacheFromExtstore != 1 || flashItems(s) != 0 {
		t.Fatalf("after two reads: %+v, %d flash items", fs, flashItems(s))
	}
	checkInvariants(t, s)
}
