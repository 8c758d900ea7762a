package store

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/extstore"
)

// stuckFile holds every write until release is closed: the engine's
// write buffers, once submitted, stay busy.
type stuckFile struct {
	extstore.File
	release chan struct{}
}

func (f stuckFile) WriteAt(p []byte, off int64) (int, error) {
	<-f.release
	return f.File.WriteAt(p, off)
}

// A rescue whose page has spent its waits for a write buffer still tries
// rescueMinTries times, a millisecond apart, before the record is lost,
// as memcached's compactor does: a busy writer costs a page's rescues
// only after a real wait.
func TestCompactRescueWaitsWhenBudgetSpent(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	unstick := func() { once.Do(func() { close(release) }) }
	e := openTestEngine(t, 8<<20, 1<<20, 64<<10, func(f extstore.File) extstore.File {
		return stuckFile{File: f, release: release}
	})
	t.Cleanup(unstick) // (cleanups run last first: before the engine's Close waits for its writes)
	s := newManualStore(t, Config{MemoryLimit: 64 << 20, Shards: 1, Flash: &FlashConfig{Engine: e}})
	value := bytes.Repeat([]byte("r"), 3000)
	moved := 0
	for ; moved < 10000; moved++ {
		k := fmt.Appendf(nil, "k%d", moved)
		if s.Set(ModeSet, k, 0, 0, value, 0) != Stored {
			t.Fatalf("set %s failed", k)
		}
		if !s.MoveToFlash(k) {
			break // every write buffer is busy
		}
	}
	if moved == 0 || moved == 10000 {
		t.Fatalf("%d items moved before the writer stalled", moved)
	}
	sh, tag := s.flashShard([]byte("k0"))
	sh.mu.Lock()
	r := sh.rec(sh.posOf(sh.find([]byte("k0"), tag)))
	loc, cas := r.flashLoc(), r.cas()
	sh.mu.Unlock()
	waits := 0
	start := time.Now()
	s.rescueRecord(extstore.Candidate{}, loc, extstore.Record{Key: []byte("k0"), Value: value, CAS: cas}, &waits)
	if took := time.Since(start); took < (rescueMinTries-1)*time.Millisecond {
		t.Fatalf("rescue gave up after %v, want at least %d waits of 1 ms", took, rescueMinTries-1)
	}
	if fs := s.FlashStats(); fs.CompactLost != 1 || fs.CompactRescues != 0 {
		t.Fatalf("flash stats %+v, want the record lost", fs)
	}
	unstick()
}
