package store

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/extstore"
)

// A watched compaction logs memcached's sysevents lines in its order; an
// unwatched one logs nothing.
func TestFlashCompactionEvents(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStoreFor(t, clock, FlashConfig{Engine: fx.e, ItemSize: 512, ItemAge: 10, Policy: extstore.Policy{CompactUnder: 8, MaxFrag: 0.8}})
	var mu sync.Mutex
	var lines []string
	watching := true
	s.SetFlashEventHook(func(line []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if watching && line != nil {
			lines = append(lines, string(line))
		}
		return watching
	})
	const n = 200
	fillCold(t, s, clock, n)
	if w := s.flushToFlash(clampTime(clock.Now())); w != n {
		t.Fatalf("flushed %d of %d", w, n)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		done := false
		for _, p := range fx.e.Pages(nil) {
			done = done || p.Version != 0 && !p.Active
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no page filled and written")
		}
	}
	for i := range n {
		if i%4 != 0 {
			s.Delete(fmt.Appendf(nil, "k%d", i))
		}
	}
	if done, _ := s.compactOnce(); !done {
		t.Fatal("no page compacted")
	}
	mu.Lock()
	got := strings.Join(lines, "\n")
	mu.Unlock()
	frag := fmt.Sprintf("type=compact_fraginfo ratio=0.80 bytes=%d", uint64(float64(fx.e.PageSize())*0.8))
	want := regexp.MustCompile("^" + frag + "\ntype=compact_start id=(\\d+) version=\\d+\n" +
		"type=compact_read_start id=(\\d+) offset=0\n" +
		"type=compact_read_end id=\\d+ offset=\\d+ rescues=([1-9]\\d*) rescues_realloc=0 lost=0 lost_oom=0 skipped=0\n" +
		"type=compact_end id=\\d+$")
	if !want.MatchString(got) {
		t.Fatalf("events:\n%s", got)
	}
	mu.Lock()
	watching, lines = false, nil
	mu.Unlock()
	s.compactOnce()
	if len(lines) != 0 {
		t.Fatalf("unwatched compaction logged %q", lines)
	}
}
