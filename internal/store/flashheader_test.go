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
