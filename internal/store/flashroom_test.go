package store

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// roomFixture is a store under -M whose flash item "k" has a value of its
// test's size, and whose memory is then filled with items of that size:
// the class the read's room comes from has none left.
type roomFixture struct {
	s      *Store
	value  []byte
	filled int // fill0 .. fill<filled-1> are stored
}

func newRoomFixture(t *testing.T, vlen int) *roomFixture {
	t.Helper()
	e := openTestEngine(t, 8<<20, 2<<20, 1<<20, nil)
	s := newManualStore(t, Config{MemoryLimit: 8 << 20, Shards: 1, DisableEvictions: true, Flash: &FlashConfig{Engine: e}})
	fx := &roomFixture{s: s, value: bytes.Repeat([]byte("0123456789abcdef"), vlen/16)}
	putOnFlash(t, s, "k", 3, fx.value)
	fx.filled, _ = fillUntilRefused(t, s, 10000,
		func(i int) []byte { return fmt.Appendf(nil, "fill%d", i) },
		func(int) []byte { return fx.value })
	return fx
}

// start looks k up and starts its read; it reports whether the read was
// made, and returns a channel closed when it is done.
func (fx *roomFixture) start(t *testing.T, fr *FlashRead) (chan struct{}, bool) {
	t.Helper()
	hit, onFlash := fx.s.GetFlash([]byte("k"), func([]byte, Meta) { t.Fatal("value callback for a flash item") }, fr)
	if !hit || !onFlash {
		t.Fatalf("k: hit %v, on flash %v", hit, onFlash)
	}
	done := make(chan struct{})
	return done, fr.Start(func(*FlashRead) { close(done) })
}

func wait(t *testing.T, done chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("flash read never completed")
	}
}

// refill reports whether one more item of the fixture's size fits.
func (fx *roomFixture) refill() bool {
	return fx.s.Set(ModeSet, []byte("refill"), 0, 0, fx.value, 0) == Stored
}

// A flash read takes its value's room from the slabs as memcached's does
// (a chunk of the value's class, or a chain): with none to be had it is
// not made (get_oom_extstore); with room it holds it until the reply is
// made, or until an abandoned read completes.
func TestFlashReadRoom(t *testing.T) {
	sizes := []struct {
		name string
		vlen int
	}{
		{"chunk", 3000},
		{"chain", 700 << 10},
	}
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			fx := newRoomFixture(t, sz.vlen)
			s := fx.s
			var fr FlashRead
			if _, ok := fx.start(t, &fr); ok {
				t.Fatal("read started with no memory for its value")
			}
			if fs := s.FlashStats(); fs.GetOOMExtstore != 1 || fs.GetExtstore != 0 {
				t.Fatalf("flash stats %+v, want one oom and no read", fs)
			}
			// Get, which reads in place, refuses it too, and counts the
			// miss its caller sees, as a meta or binary get does.
			before := s.Stats()
			if _, _, ok := get(s, "k"); ok {
				t.Fatal("in-place get read a value it had no room for")
			}
			if st := s.Stats(); st.CmdGet-before.CmdGet != 1 || st.GetHits != before.GetHits || st.GetMisses-before.GetMisses != 1 {
				t.Fatalf("refused in-place get counted cmd_get %d, get_hits %d, get_misses %d; want 1, 0, 1",
					st.CmdGet-before.CmdGet, st.GetHits-before.GetHits, st.GetMisses-before.GetMisses)
			}
			if !s.Delete([]byte("fill0")) {
				t.Fatal("fill0 missing")
			}
			// Read, then answered: the room is held until Finish.
			done, ok := fx.start(t, &fr)
			if !ok {
				t.Fatal("read refused with room freed for it")
			}
			wait(t, done)
			if fx.refill() {
				t.Fatal("a read in flight holds no room")
			}
			if v, ok := fr.Finish(); !ok || !bytes.Equal(v, fx.value) {
				t.Fatalf("read back %d bytes, hit %v", len(v), ok)
			}
			if !fx.refill() || !s.Delete([]byte("refill")) {
				t.Fatal("the room was not given back after the reply")
			}
			// Abandoned before it completes: the completion frees it.
			var early FlashRead
			done, _ = fx.start(t, &early)
			early.Abort()
			wait(t, done)
			if !fx.refill() || !s.Delete([]byte("refill")) {
				t.Fatal("an abandoned read kept its room")
			}
			// Abandoned after it completed: Abort frees it.
			var late FlashRead
			done, _ = fx.start(t, &late)
			wait(t, done)
			late.Abort()
			if !fx.refill() || !s.Delete([]byte("refill")) {
				t.Fatal("a completed, abandoned read kept its room")
			}
			if fs := s.FlashStats(); fs.GetOOMExtstore != 2 || fs.GetExtstore != 3 || fs.GetAbortedExtstore != 2 {
				t.Fatalf("flash stats %+v", fs)
			}
			checkInvariants(t, s)
		})
	}
}

// With extstore the whole limit starts malloced in the global page pool,
// as memcached prefills it for its page mover: `slabs reassign 0 N` can
// hand any of -m to a class. Without, pages are malloced as classes ask.
func TestFlashPrefillsPagePool(t *testing.T) {
	cases := []struct {
		name      string
		flash     bool
		wantPages int
	}{
		{"extstore", true, 8},
		{"ram only", false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{MemoryLimit: 8 << 20, Shards: 1}
			if c.flash {
				cfg.Flash = &FlashConfig{Engine: openTestEngine(t, 8<<20, 2<<20, 1<<20, nil)}
			}
			s := newManualStore(t, cfg)
			a := s.slabs.arena
			a.mu.Lock()
			malloced, pooled := a.malloced, len(a.pool)
			a.mu.Unlock()
			if malloced != c.wantPages || pooled != c.wantPages {
				t.Fatalf("%d pages malloced, %d pooled; want %d of each", malloced, pooled, c.wantPages)
			}
			if set(s, "k", "v") != Stored {
				t.Fatal("set failed")
			}
		})
	}
}
