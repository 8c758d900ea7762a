package extstore

import (
	"runtime"
	"sync"
	"testing"
)

// Writers, readers, deleters and a compactor at once, the store full and
// evicting: a read returns the record written at its location or a miss,
// never another record.
func TestConcurrentNeverWrongValue(t *testing.T) {
	cfg := smallConfig(t.TempDir(), 2)
	cfg.Threads, cfg.IODepth = 2, 4
	e := openEngine(t, cfg)

	var mu sync.Mutex
	written := map[Location]Record{}
	var order []Location
	pick := func(n int) (Location, Record, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(order) == 0 {
			return Location{}, Record{}, false
		}
		loc := order[n%len(order)]
		return loc, written[loc], true
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	run := func(fn func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				fn(i)
				runtime.Gosched() // leave the writer its share of two CPUs
			}
		}()
	}
	for r := range 2 {
		run(func(i int) {
			loc, rec, ok := pick(i*7 + r)
			if !ok {
				return
			}
			if got, err := e.Read(loc); err == nil && !sameRecord(got, rec) {
				t.Errorf("Read(%+v) = %q, want %q", loc, got.Key, rec.Key)
			}
		})
	}
	run(func(i int) {
		if loc, _, ok := pick(i * 13); ok {
			e.Delete(loc)
		}
	})
	run(func(int) {
		c, ok := e.CompactCandidate(Policy{CompactUnder: 3, DropUnder: 2, MaxFrag: 0.9, DropUnread: true})
		if !ok {
			return
		}
		e.ScanPage(c.Page, c.Version, func(loc Location, rec Record) bool {
			mu.Lock()
			want, known := written[loc]
			mu.Unlock()
			if known && !sameRecord(rec, want) {
				t.Errorf("scan at %+v: %q, want %q", loc, rec.Key, want.Key)
			}
			return true
		})
		e.ClosePage(c.Page, c.Version)
	})

	for i := range 400 {
		rec := testRecord(i, 500+i*7919%(tWbuf/3))
		loc, err := e.Write(Bucket(i%2), rec)
		if err == ErrBusy || err == ErrFull {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		written[loc] = rec // a reused page has a new version: locations never repeat
		order = append(order, loc)
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
	if s := e.Stats(); s.PageEvictions+s.PageReclaims == 0 {
		t.Fatalf("no page was reclaimed: %+v", s)
	}
}
