package protocol

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/extstore"
	"github.com/gocached/gocached/internal/store"
)

// gateBackend holds every flash read until the test lets it go, so a test
// sees the Session wait for it.
type gateBackend struct {
	mu  sync.Mutex
	ops []*extstore.Op
}

func (b *gateBackend) Read(op *extstore.Op) {
	b.mu.Lock()
	b.ops = append(b.ops, op)
	b.mu.Unlock()
}

func (b *gateBackend) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.ops)
}

func (b *gateBackend) Close() {
	for b.Queued() > 0 {
		b.release(nil)
	}
}

// release completes the oldest held read on another goroutine, as a
// back end would, damaging it with fault first when fault is set.
func (b *gateBackend) release(fault func(op *extstore.Op) (int, error)) {
	b.mu.Lock()
	op := b.ops[0]
	b.ops = b.ops[1:]
	b.mu.Unlock()
	go func() {
		if fault != nil {
			op.Complete(fault(op))
			return
		}
		op.Complete(op.File.ReadAt(op.Buf, op.Off))
	}()
}

// countFile counts the buffers the engine writes to it.
type countFile struct {
	extstore.File
	writes *atomic.Int64
}

func (f countFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.writes.Add(1)
	return n, err
}

type flashEnv struct {
	env    *Env
	gate   *gateBackend
	writes atomic.Int64
}

// newFlashEnv is an Env whose store has a small extstore engine that
// holds its reads at a gate, for an engine that resumes pending Sessions.
func newFlashEnv(t *testing.T) *flashEnv { return newFlashEnvWith(t, func(*store.Config) {}) }

// newFlashEnvWith is newFlashEnv with its store's config changed by tune.
func newFlashEnvWith(t *testing.T, tune func(*store.Config)) *flashEnv {
	fe := &flashEnv{gate: &gateBackend{}}
	const wbuf = 128 << 10
	cfg := extstore.DefaultConfig(extstore.FileSpec{Path: filepath.Join(t.TempDir(), "ext"), Size: 8 * 2 * wbuf})
	cfg.PageSize, cfg.WbufSize, cfg.TestAlign = 2*wbuf, wbuf, wbuf
	cfg.Backend = fe.gate
	cfg.Open = func(path string) (extstore.File, error) {
		f, err := extstore.OpenOSFile(path)
		return countFile{File: f, writes: &fe.writes}, err
	}
	e, err := extstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc := store.Config{MemoryLimit: 8 << 20, Shards: 2, ArenaReserve: 8 << 20,
		Flash: &store.FlashConfig{Engine: e, ItemSize: 512}}
	tune(&sc)
	st, err := store.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); e.Close() })
	env := newStillEnv(t)
	env.Store = st
	env.ResumesPending = true
	fe.env = env
	return fe
}

func flashVal(key string) string {
	return strings.Repeat(key+".", 3000/(len(key)+1))
}

// storeOnFlash sets the keys with 3 KB values and moves them to flash,
// then adds filler items until two write buffers have reached the file:
// the engine has taken the first as written once the second is (one
// writer), so the keys' reads go to the back end.
func (fe *flashEnv) storeOnFlash(t *testing.T, keys ...string) {
	st := fe.env.Store
	for _, k := range keys {
		st.Set(store.ModeSet, []byte(k), 5, 0, []byte(flashVal(k)), 0)
		if !st.MoveToFlash([]byte(k)) {
			t.Fatalf("%s not moved to flash", k)
		}
	}
	for i := 0; fe.writes.Load() < 2; i++ {
		k := fmt.Sprintf("filler%d", i)
		st.Set(store.ModeSet, []byte(k), 0, 0, []byte(flashVal(k)), 0)
		if i > 1000 || !st.MoveToFlash([]byte(k)) {
			t.Fatalf("no buffer written after %d fillers", i)
		}
		if i > 200 { // the buffers are queued; their writes are the writer's
			deadline := time.Now().Add(time.Minute)
			for fe.writes.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
	}
}

// waitGate waits until n reads are held.
func (fe *flashEnv) waitGate(t *testing.T, n int) {
	deadline := time.Now().Add(5 * time.Second)
	for fe.gate.Queued() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d reads held, want %d", fe.gate.Queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A pipelined multiget mixing RAM and flash hits answers in order: the
// replies before a flash key go out, the later ones wait for its read,
// and the read's completion wakes the engine.
func TestFlashGetKeepsOrder(t *testing.T) {
	fe := newFlashEnv(t)
	st := fe.env.Store
	st.Set(store.ModeSet, []byte("a"), 1, 0, []byte("ram-a"), 0)
	st.Set(store.ModeSet, []byte("c"), 3, 0, []byte("ram-c"), 0)
	fe.storeOnFlash(t, "b", "d")
	s := NewSession(fe.env)
	woke := make(chan struct{}, 10)
	s.SetWakeup(func() { woke <- struct{}{} })
	in := []byte("get a b c d\r\ngets a\r\n")
	var out []byte
	var calls int
	for len(in) > 0 || s.Pending() {
		n, o, st := s.Process(in, out)
		in, out = in[n:], o
		calls++
		if st == Close || calls > 50 {
			t.Fatalf("status %v after %d calls, out %q", st, calls, out)
		}
		if n > 0 || s.Pending() && fe.gate.Queued() == 0 {
			continue
		}
		// Waiting for a read: nothing after it may be out yet.
		if bytes.Contains(out, []byte("VALUE c ")) && !bytes.Contains(out, []byte("VALUE b ")) {
			t.Fatalf("c answered before b: %q", out)
		}
		fe.waitGate(t, 1)
		fe.gate.release(nil)
		select {
		case <-woke:
		case <-time.After(time.Minute):
			t.Fatal("no wakeup after the read completed")
		}
	}
	want := "VALUE a 1 5\r\nram-a\r\n" +
		"VALUE b 5 " + fmt.Sprint(len(flashVal("b"))) + "\r\n" + flashVal("b") + "\r\n" +
		"VALUE c 3 5\r\nram-c\r\n" +
		"VALUE d 5 " + fmt.Sprint(len(flashVal("d"))) + "\r\n" + flashVal("d") + "\r\n" +
		"END\r\n"
	if got := string(out); !strings.HasPrefix(got, want) || !strings.HasPrefix(got[len(want):], "VALUE a 1 5 ") {
		t.Fatalf("replies:\n%q\nwant\n%q", abbrev(got), abbrev(want))
	}
	if fs := st.FlashStats(); fs.GetExtstore != 2 || fs.MissFromExtstore != 0 {
		t.Fatalf("flash stats %+v", fs)
	}
}

// A flash read that fails answers as a miss, counted, and the item is gone.
func TestFlashGetReadErrorIsMiss(t *testing.T) {
	fe := newFlashEnv(t)
	fe.storeOnFlash(t, "b")
	s := NewSession(fe.env)
	s.SetWakeup(func() {})
	in := []byte("get b\r\nget b\r\n")
	n, out, _ := s.Process(in, nil)
	in = in[n:]
	fe.waitGate(t, 1)
	fe.gate.release(func(op *extstore.Op) (int, error) {
		n, err := op.File.ReadAt(op.Buf, op.Off)
		op.Buf[len(op.Buf)-1] ^= 1
		return n, err
	})
	deadline := time.Now().Add(time.Minute)
	for !s.Pending() {
		if time.Now().After(deadline) {
			t.Fatal("read never completed")
		}
		time.Sleep(time.Millisecond)
	}
	for len(in) > 0 || s.Pending() {
		var n int
		n, out, _ = s.Process(in, out)
		in = in[n:]
	}
	if string(out) != "END\r\nEND\r\n" {
		t.Fatalf("replies %q, want two misses", out)
	}
	fs := fe.env.Store.FlashStats()
	if fs.GetExtstore != 1 || fs.MissFromExtstore != 1 || fs.BadcrcFromExtstore != 1 {
		t.Fatalf("flash stats %+v", fs)
	}
}

// flashRun feeds in to s, letting each held read go (damaged by fault when
// set), until every request is answered.
func (fe *flashEnv) flashRun(t *testing.T, s *Session, in []byte, fault func(op *extstore.Op) (int, error)) string {
	woke := make(chan struct{}, 10)
	s.SetWakeup(func() { woke <- struct{}{} })
	var out []byte
	for calls := 0; len(in) > 0 || s.Pending() || s.flash.active; calls++ {
		n, o, st := s.Process(in, out)
		in, out = in[n:], o
		if st == Close || calls > 50 {
			t.Fatalf("status %v after %d calls, out %q", st, calls, out)
		}
		// A read in flight holds up the Session, whatever else waits
		// behind it (a paused multiget is Pending too).
		if !s.flash.active || s.flashReady() {
			continue
		}
		fe.waitGate(t, 1)
		fe.gate.release(fault)
		select {
		case <-woke:
		case <-time.After(time.Minute):
			t.Fatal("no wakeup after the read completed")
		}
	}
	return string(out)
}

// mg reads a flash value without blocking; a failed read answers memcached's
// bare EN (nothing under q), and the requests after it wait.
func TestFlashMetaGet(t *testing.T) {
	fe := newFlashEnv(t)
	fe.env.Store.Set(store.ModeSet, []byte("a"), 0, 0, []byte("ram"), 0)
	fe.storeOnFlash(t, "b", "c", "d")
	s := NewSession(fe.env)
	vb := flashVal("b")
	got := fe.flashRun(t, s, []byte("mg b s v f Oxy k\r\nmg a v\r\nmg b s\r\n"), nil)
	want := fmt.Sprintf("VA %d s%d f5 Oxy kb\r\n%s\r\nVA 3\r\nram\r\nHD s%d\r\n", len(vb), len(vb), vb, len(vb))
	if got != want {
		t.Fatalf("replies:\n%q\nwant\n%q", abbrev(got), abbrev(want))
	}
	flip := func(op *extstore.Op) (int, error) {
		n, err := op.File.ReadAt(op.Buf, op.Off)
		op.Buf[len(op.Buf)-1] ^= 1
		return n, err
	}
	got = fe.flashRun(t, s, []byte("mg c v Oxy k\r\nmg d v q\r\nmn\r\nmg c v\r\n"), flip)
	if want := "EN\r\nMN\r\nEN\r\n"; got != want {
		t.Fatalf("replies to failed reads %q, want %q", got, want)
	}
	if fs := fe.env.Store.FlashStats(); fs.MissFromExtstore != 2 || fs.BadcrcFromExtstore != 2 {
		t.Fatalf("flash stats %+v", fs)
	}
	st := drive(t, s, []byte("stats\r\n")).out
	want = "STAT get_flushed 0\r\nSTAT get_extstore 3\r\nSTAT get_aborted_extstore 0\r\nSTAT get_oom_extstore 0\r\n" +
		"STAT recache_from_extstore 0\r\nSTAT miss_from_extstore 2\r\nSTAT badcrc_from_extstore 2\r\nSTAT delete_misses "
	if !strings.Contains(st, want) {
		t.Fatalf("stats lack the extstore counters in memcached's place: %q", abbrev(st))
	}
	want = "STAT log_watchers 0\r\nSTAT extstore_memory_pressure 0.00\r\nSTAT extstore_compact_lost 0\r\n" +
		"STAT extstore_compact_rescues 0\r\nSTAT extstore_compact_resc_cold 0\r\nSTAT extstore_compact_resc_old 0\r\n" +
		"STAT extstore_compact_skipped 0\r\nSTAT extstore_page_allocs "
	if !strings.Contains(st, want) || !strings.Contains(st, "STAT extstore_io_queue ") {
		t.Fatalf("stats lack the extstore lines after log_watchers: %q", abbrev(st))
	}
}

// Binary gets of flash items: a hit after its read, a failed read as
// memcached turns it into a miss (KEY_ENOENT, the key for GetK, the
// item's CAS), nothing for GetKQ; a touch reads nothing.
func TestFlashBinaryGet(t *testing.T) {
	fe := newFlashEnv(t)
	fe.storeOnFlash(t, "b", "c", "d", "e")
	st := fe.env.Store
	casOf := func(k string) uint64 {
		var c uint64
		st.MetaGet([]byte(k), false, store.NewCAS{}, func(it store.Item, _ bool) bool { c = it.CAS(); return false })
		return c
	}
	cb, cc := casOf("b"), casOf("c")
	s := NewSession(fe.env)
	vb := flashVal("b")
	got := fe.flashRun(t, s, []byte(binReq(opGet, "b", "", "", 1, 0)+binReq(opTouch, "e", be32(0), "", 2, 0)), nil)
	want := string(appendBinHeader(nil, opGet, statusOK, 4, 0, uint32(4+len(vb)), [4]byte{0, 0, 0, 1}, cb)) + "\x00\x00\x00\x05" + vb +
		string(appendBinHeader(nil, opTouch, statusOK, 4, 0, 4, [4]byte{0, 0, 0, 2}, casOf("e"))) + "\x00\x00\x00\x05"
	if got != want {
		t.Fatalf("binary hits:\n%q\nwant\n%q", abbrev(got), abbrev(want))
	}
	flip := func(op *extstore.Op) (int, error) {
		n, err := op.File.ReadAt(op.Buf, op.Off)
		op.Buf[len(op.Buf)-1] ^= 1
		return n, err
	}
	got = fe.flashRun(t, s, []byte(binReq(opGetK, "c", "", "", 3, 0)+binReq(opGetKQ, "d", "", "", 4, 0)+binReq(opNoop, "", "", "", 5, 0)), flip)
	want = string(appendBinHeader(nil, opGetK, statusKeyNotFound, 0, 1, 1, [4]byte{0, 0, 0, 3}, cc)) + "c" +
		string(appendBinHeader(nil, opNoop, statusOK, 0, 0, 0, [4]byte{0, 0, 0, 5}, 0))
	if got != want {
		t.Fatalf("binary misses:\n%q\nwant\n%q", got, want)
	}
}

// An engine that does not resume pending Sessions gets flash values read
// in place; a failed read still answers mg's EN, never a VA line without
// its value.
func TestFlashMetaGetInPlace(t *testing.T) {
	fe := newFlashEnv(t)
	fe.env.ResumesPending = false
	fe.storeOnFlash(t, "b", "c")
	flip := func(op *extstore.Op) (int, error) {
		n, err := op.File.ReadAt(op.Buf, op.Off)
		op.Buf[len(op.Buf)-1] ^= 1
		return n, err
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		for _, fault := range []func(*extstore.Op) (int, error){nil, flip} {
			for fe.gate.Queued() == 0 {
				time.Sleep(time.Millisecond)
			}
			fe.gate.release(fault)
		}
	}()
	s := NewSession(fe.env)
	got := drive(t, s, []byte("mg b v s\r\nmg c v\r\nmg a v\r\n")).out
	<-released
	vb := flashVal("b")
	if want := fmt.Sprintf("VA %d s%d\r\n%s\r\nEN\r\nEN\r\n", len(vb), len(vb), vb); got != want {
		t.Fatalf("replies:\n%q\nwant\n%q", abbrev(got), abbrev(want))
	}
}

// An engine may call Process for a Session whose read just completed
// before the read's wakeup has run (another event woke it), answer it and
// start the next read on the same flashWait. The completion still running
// must not touch what that next read sets up (the race detector checks it:
// here the test never waits for a wakeup, it polls as such an engine does).
func TestFlashNextReadWhileCompletionRuns(t *testing.T) {
	fe := newFlashEnv(t)
	fe.storeOnFlash(t, "b", "d")
	s := NewSession(fe.env)
	woke := make(chan struct{}, 10)
	s.SetWakeup(func() { woke <- struct{}{} })
	in := []byte("get b\r\nget d\r\nget b\r\n")
	var out []byte
	deadline := time.Now().Add(time.Minute)
	for len(in) > 0 || s.Pending() || s.flash.active {
		if time.Now().After(deadline) {
			t.Fatalf("not answered in a minute: %q", abbrev(string(out)))
		}
		n, o, st := s.Process(in, out)
		in, out = in[n:], o
		if st == Close {
			t.Fatalf("closed: %q", out)
		}
		if fe.gate.Queued() > 0 {
			fe.gate.release(nil)
		}
	}
	var want string
	for _, k := range []string{"b", "d", "b"} {
		want += "VALUE " + k + " 5 " + fmt.Sprint(len(flashVal(k))) + "\r\n" + flashVal(k) + "\r\nEND\r\n"
	}
	if string(out) != want {
		t.Fatalf("replies:\n%q\nwant\n%q", abbrev(string(out)), abbrev(want))
	}
	for range 3 { // every completion's wakeup ran
		select {
		case <-woke:
		case <-time.After(time.Minute):
			t.Fatal("a completed read never called its wakeup")
		}
	}
}
