package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/extstore"
)

// flashLocOf is key's flash location; false when key is not a flash item.
func flashLocOf(s *Store, key string) (extstore.Location, bool) {
	sh, tag := s.shardFor([]byte(key))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	slot := sh.find([]byte(key), tag)
	if slot < 0 || !sh.rec(sh.posOf(slot)).flash() {
		return extstore.Location{}, false
	}
	return sh.rec(sh.posOf(slot)).flashLoc(), true
}

// flashPosOf is the arena offset of key's record; -1 when absent.
func flashPosOf(s *Store, key string) int {
	sh, tag := s.shardFor([]byte(key))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	slot := sh.find([]byte(key), tag)
	if slot < 0 {
		return -1
	}
	return sh.posOf(slot)
}

// flashAll writes n cold items to flash and waits until the page of k0 is
// written out (no longer active). It returns k0's page.
func flashAll(t *testing.T, s *Store, fx *flashFixture, clock *fakeClock, n int) uint16 {
	t.Helper()
	fillCold(t, s, clock, n)
	written := 0
	// A round stops when every write buffer is being written; the next
	// one goes on once the writer has written one out.
	for deadline := time.Now().Add(time.Minute); written < n; {
		w := s.flushToFlash(clampTime(clock.Now()))
		written += w
		if w == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("flushed %d of %d", written, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	loc, ok := flashLocOf(s, "k0")
	if !ok {
		t.Fatal("k0 is not on flash")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if p := fx.e.Pages(nil)[loc.Page]; !p.Active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("k0's page was never written out")
		}
	}
	return loc.Page
}

// keysOnPage is the keys k0..k(n-1) whose values lie on page id.
func keysOnPage(s *Store, n int, id uint16) []string {
	var keys []string
	for i := range n {
		key := fmt.Sprintf("k%d", i)
		if loc, ok := flashLocOf(s, key); ok && loc.Page == id {
			keys = append(keys, key)
		}
	}
	return keys
}

// With no page free, compacting a page whose only live record is rescued
// evicts nothing: the rescue deletes the record from its page first, as
// memcached's compactor does, which frees the page for the rescue to be
// written to (memcached 1.6.45's extstore.t: no page evicted while its
// writes fill the file and compaction keeps up).
func TestCompactRescueFreesItsPage(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStoreFor(t, clock, FlashConfig{Engine: fx.e, ItemSize: 512, ItemAge: 10, Policy: extstore.Policy{CompactUnder: 1, MaxFrag: 0.9}})
	const n = 900 // seven of the eight pages full, the last one open
	page := flashAll(t, s, fx, clock, n)
	if free := fx.e.Stats().PagesFree; free != 0 {
		t.Fatalf("%d pages free after the writes, want 0", free)
	}
	keys := keysOnPage(s, n, page)
	if len(keys) < 2 {
		t.Fatalf("%d keys on page %d", len(keys), page)
	}
	kept := keys[len(keys)/2]
	for _, k := range keys {
		if k != kept {
			s.Delete([]byte(k))
		}
	}
	if done, _ := s.compactOnce(); !done {
		t.Fatal("no page compacted")
	}
	st, fs := fx.e.Stats(), s.FlashStats()
	if st.PageEvictions != 0 || fs.CompactRescues != 1 || fs.CompactLost != 0 {
		t.Fatalf("page evictions %d, rescues %d, lost %d; want 0, 1, 0", st.PageEvictions, fs.CompactRescues, fs.CompactLost)
	}
	if loc, ok := flashLocOf(s, kept); !ok || loc.Page != page {
		t.Fatalf("%s rescued to %+v, want the page it freed (%d)", kept, loc, page)
	}
	i := 0
	fmt.Sscanf(kept, "k%d", &i)
	if v, _, ok := get(s, kept); !ok || v != string(flashValue(i)) {
		t.Fatalf("%s after compaction: hit %v, %d bytes", kept, ok, len(v))
	}
	checkInvariants(t, s)
}

// A rescued header that something else holds (a reader, or `debugitem
// ref`) is not rewritten under it: a new header takes its place in the
// index, as memcached's compactor reallocates it (rescues_realloc), and
// the item reads from the new location.
func TestCompactReallocsHeldHeader(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStoreFor(t, clock, FlashConfig{Engine: fx.e, ItemSize: 512, ItemAge: 10, Policy: extstore.Policy{CompactUnder: 8, MaxFrag: 0.8}})
	const n = 300
	page := flashAll(t, s, fx, clock, n)
	keys := keysOnPage(s, n, page)
	held := keys[1]
	for j, k := range keys {
		if j%4 != 1 {
			s.Delete([]byte(k))
		}
	}
	ref, ok := s.DebugRef([]byte(held))
	if !ok {
		t.Fatalf("no ref on %s", held)
	}
	oldPos := flashPosOf(s, held)
	if done, _ := s.compactOnce(); !done {
		t.Fatal("no page compacted")
	}
	if pos := flashPosOf(s, held); pos == oldPos || pos < 0 {
		t.Fatalf("%s still at %d (held header rewritten in place)", held, pos)
	}
	if loc, ok := flashLocOf(s, held); !ok || loc.Page == page {
		t.Fatalf("%s at %+v after its page %d was compacted", held, loc, page)
	}
	i := 0
	fmt.Sscanf(held, "k%d", &i)
	if v, _, ok := get(s, held); !ok || v != string(flashValue(i)) {
		t.Fatalf("%s after compaction: hit %v, %d bytes", held, ok, len(v))
	}
	s.ReleaseRef(ref)
	if s.Pins() != 0 {
		t.Fatalf("%d pins left", s.Pins())
	}
	checkInvariants(t, s)
}

// An item invalidated (meta delete I, a new CAS) after its value went to
// flash still reads: the value on flash is the item's whatever CAS the
// header in RAM has since, as memcached fills a read's CAS from the header.
func TestFlashReadAfterNewCAS(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	fillCold(t, s, clock, 10)
	if !s.MoveToFlash([]byte("k3")) {
		t.Fatal("k3 not moved to flash")
	}
	if r := s.DeleteItem([]byte("k3"), DeleteRequest{Invalidate: true}); r != Stored {
		t.Fatalf("invalidate: %v", r)
	}
	if v, _, ok := get(s, "k3"); !ok || v != string(flashValue(3)) {
		t.Fatalf("k3 after invalidation: hit %v, %d bytes", ok, len(v))
	}
	if fs := s.FlashStats(); fs.MissFromExtstore != 0 || fs.BadcrcFromExtstore != 0 {
		t.Fatalf("flash stats %+v", fs)
	}
}
