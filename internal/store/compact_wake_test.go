package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/extstore"
)

// fragmentPages fills about pages pages of a live store's flash tier with
// 2 KB values and deletes three items in four, so every full page is a
// compaction candidate under any policy that lets one be picked.
func fragmentPages(t *testing.T, s *Store, e *extstore.Engine, pages int) {
	t.Helper()
	perPage := fPage / 2100
	for i := range pages * perPage {
		k := fmt.Appendf(nil, "k%d", i)
		if s.Set(ModeSet, k, 0, 0, flashValue(i), 0) != Stored {
			t.Fatalf("set k%d", i)
		}
		// A move fails while every write buffer waits for the disk.
		if !s.MoveToFlash(k) {
			e.WaitWrites()
			if !s.MoveToFlash(k) {
				t.Fatalf("k%d not moved to flash", i)
			}
		}
		if i%4 != 0 {
			s.Delete(k)
		}
	}
	e.WaitWrites()
}

// fullPages counts the pages written whole (neither free nor open).
func fullPages(e *extstore.Engine) int {
	n := 0
	for _, p := range e.Pages(nil) {
		if p.Version != 0 && !p.Active {
			n++
		}
	}
	return n
}

// compactStore is a store on an engine of n pages whose policy picks no
// page until a test changes it, with its compactor running and nothing
// else: no background loop kicks it after activity, so what the
// compactor does it does on its own.
func compactStore(t *testing.T, n int) (*Store, *extstore.Engine) {
	e := openTestEngine(t, uint64(n)*fPage, fPage, fWbuf, nil)
	s := newManualStore(t, Config{MemoryLimit: 64 << 20, Shards: 1,
		Flash: &FlashConfig{Engine: e, ItemSize: 512, Policy: extstore.Policy{MaxFrag: 0.8}}})
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		s.compactLoop(stop)
		close(done)
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
	})
	return s, e
}

// waitReclaims waits until the engine has reclaimed want pages.
func waitReclaims(t *testing.T, e *extstore.Engine, want uint64, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for e.Stats().PageReclaims < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d pages reclaimed after 30 s, want %d", what, e.Stats().PageReclaims, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// memcached's `extstore compact_under N` on an idle server starts
// compaction: the compactor looks at once, not after the next client
// write (chunked-extstore.t sets the knobs, then only polls stats).
func TestFlashKnobChangeWakesCompactor(t *testing.T) {
	s, e := compactStore(t, 8)
	fragmentPages(t, s, e, 4)
	full := fullPages(e)
	if full == 0 {
		t.Fatal("no page written whole")
	}
	s.SetFlashKnobs(func(k *FlashKnobs) { k.Policy.CompactUnder = 8 })
	waitReclaims(t, e, 1, "after compact_under was raised")
}

// A compaction kick does a bounded number of pages; the compactor goes on
// by itself while candidates remain, rather than waiting for activity.
func TestFlashCompactorGoesOnPastItsBound(t *testing.T) {
	const pages = compactPagesPerKick + 8
	s, e := compactStore(t, pages+8)
	fragmentPages(t, s, e, pages)
	full := fullPages(e)
	if full <= compactPagesPerKick {
		t.Fatalf("%d pages written whole, want over %d", full, compactPagesPerKick)
	}
	s.SetFlashKnobs(func(k *FlashKnobs) { k.Policy.CompactUnder = pages + 8 })
	waitReclaims(t, e, uint64(full), "one kick, no activity after it")
	for i := 0; i < pages*(fPage/2100); i += 4 {
		if _, _, ok := get(s, fmt.Sprintf("k%d", i)); !ok {
			t.Fatalf("k%d lost by compaction", i)
		}
	}
}
