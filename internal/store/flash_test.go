package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/extstore"
)

// Flash test sizes: buffers of 128 KB, pages of two, files of eight pages.
const (
	fWbuf = 128 << 10
	fPage = 2 * fWbuf
	fFile = 8 * fPage
)

// flipFile is an extstore file whose reads can be made to return damaged
// bytes; it counts its writes so a test can wait for a buffer to land.
type flipFile struct {
	extstore.File
	flip   *atomic.Bool
	writes *atomic.Int64
}

func (f flipFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if f.flip.Load() && n > 30 {
		p[30] ^= 0x40
	}
	return n, err
}

func (f flipFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.writes.Add(1)
	return n, err
}

type flashFixture struct {
	e      *extstore.Engine
	flip   atomic.Bool
	writes atomic.Int64
}

func openFlash(t testing.TB) *flashFixture {
	t.Helper()
	fx := &flashFixture{}
	fx.e = openTestEngine(t, fFile, fPage, fWbuf, func(f extstore.File) extstore.File {
		return flipFile{File: f, flip: &fx.flip, writes: &fx.writes}
	})
	return fx
}

// openTestEngine opens an extstore engine on one file of size bytes in the
// test's directory, with pages and write buffers of the sizes given
// (aligned to the write buffer, not extstore's 2 MB); wrap, if not nil,
// stands between the engine and its file. The test's end closes it.
func openTestEngine(t testing.TB, size, page, wbuf uint64, wrap func(extstore.File) extstore.File) *extstore.Engine {
	t.Helper()
	cfg := extstore.DefaultConfig(extstore.FileSpec{Path: filepath.Join(t.TempDir(), "ext"), Size: size})
	cfg.PageSize, cfg.WbufSize, cfg.TestAlign = page, wbuf, wbuf
	if wrap != nil {
		cfg.Open = func(path string) (extstore.File, error) {
			f, err := extstore.OpenOSFile(path)
			if err != nil {
				return nil, err
			}
			return wrap(f), nil
		}
	}
	e, err := extstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newFlashStore is a manual store (no background loop) on fx's engine,
// with items older than 10 s going to flash.
func newFlashStore(t testing.TB, fx *flashFixture, clock *fakeClock) *Store {
	t.Helper()
	return newFlashStoreFor(t, clock, FlashConfig{Engine: fx.e, ItemSize: 512, ItemAge: 10})
}

// newFlashStoreFor is a manual store of 64 MB in one shard on clock, its
// flash tier configured as fc.
func newFlashStoreFor(t testing.TB, clock *fakeClock, fc FlashConfig) *Store {
	t.Helper()
	return newManualStore(t, Config{MemoryLimit: 64 << 20, Shards: 1, Now: clock.Now, Flash: &fc})
}

func flashValue(i int) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "v%d.", i), 2000)[:2000+i%7]
}

// fillCold stores n items of 2 KB and lets the maintainer move them all
// down to COLD, then ages them past ext_item_age.
func fillCold(t *testing.T, s *Store, clock *fakeClock, n int) {
	t.Helper()
	for i := range n {
		if r := s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), uint32(i), 0, flashValue(i), 0); r != Stored {
			t.Fatalf("set k%d: %v", i, r)
		}
	}
	clock.advance(20)
	maintainUntilIdle(s, clock)
	clock.advance(20)
}

// maintainUntilIdle runs the LRU maintainer at clock's time until a round
// moves nothing (at most 100 rounds).
func maintainUntilIdle(s *Store, clock *fakeClock) {
	for range 100 {
		if s.maintain(clampTime(clock.Now())) == 0 {
			return
		}
	}
}

// putOnFlash stores key with flags and value and moves it to flash.
func putOnFlash(t *testing.T, s *Store, key string, flags uint32, value []byte) {
	t.Helper()
	if s.Set(ModeSet, []byte(key), flags, 0, value, 0) != Stored || !s.MoveToFlash([]byte(key)) {
		t.Fatalf("%s not moved to flash", key)
	}
}

// flashItems counts the flash headers in the index.
func flashItems(s *Store) int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for slot, e := range sh.idx.slots {
			if e != 0 && sh.rec(sh.posOf(slot)).flash() {
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

func TestFlashWriteAndReadBack(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	const n = 200
	fillCold(t, s, clock, n)
	before := s.Stats()
	written := s.flushToFlash(clampTime(clock.Now()))
	if written == 0 || flashItems(s) != written {
		t.Fatalf("flushed %d items, %d flash headers indexed", written, flashItems(s))
	}
	checkInvariants(t, s)
	if got := fx.e.Stats().ObjectsUsed; got != uint64(written) {
		t.Fatalf("engine holds %d objects, want %d", got, written)
	}
	after := s.Stats()
	if after.CurrItems != before.CurrItems || after.Bytes != before.Bytes {
		t.Fatalf("flush changed curr_items %d->%d, bytes %d->%d", before.CurrItems, after.CurrItems, before.Bytes, after.Bytes)
	}
	for i := range n {
		key := fmt.Sprintf("k%d", i)
		v, m, ok := get(s, key)
		if !ok || v != string(flashValue(i)) || m.Flags != uint32(i) {
			t.Fatalf("get %s: hit %v, %d bytes, flags %d", key, ok, len(v), m.Flags)
		}
	}
	if fs := s.FlashStats(); fs.GetExtstore != uint64(written) || fs.MissFromExtstore != 0 {
		t.Fatalf("flash stats %+v; want %d reads, no miss", fs, written)
	}
	// A header keeps the real length for meta's s flag and the CAS.
	var fr FlashRead
	hit, onFlash := s.GetFlash([]byte("k0"), func([]byte, Meta) { t.Fatal("value callback for a flash item") }, &fr)
	if hit && onFlash && fr.ValueLen() != len(flashValue(0)) {
		t.Fatalf("flash item length %d, want %d", fr.ValueLen(), len(flashValue(0)))
	}
	checkInvariants(t, s)
}

// Items younger than ext_item_age stay in RAM while memory is plentiful;
// a second flush of the same tail finds nothing to do.
func TestFlashItemAge(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	for i := range 50 {
		s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, flashValue(i), 0)
	}
	maintainUntilIdle(s, clock)
	if n := s.flushToFlash(clampTime(clock.Now())); n != 0 {
		t.Fatalf("flushed %d young items", n)
	}
	clock.advance(11)
	if n := s.flushToFlash(clampTime(clock.Now())); n == 0 {
		t.Fatal("no item flushed past ext_item_age")
	}
	if n := s.flushToFlash(clampTime(clock.Now())); n != 0 {
		t.Fatalf("second round flushed %d more", n)
	}
}

// Deleting, replacing, expiring or flushing a flash item frees its record
// on flash; append and incr refuse it as memcached does.
func TestFlashItemsFreed(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	fillCold(t, s, clock, 20)
	if n := s.flushToFlash(clampTime(clock.Now())); n != 20 {
		t.Fatalf("flushed %d of 20", n)
	}
	used := func() uint64 { return fx.e.Stats().ObjectsUsed }
	if !s.Delete([]byte("k0")) || used() != 19 {
		t.Fatalf("after a delete: %d objects", used())
	}
	if set(s, "k1", "small") != Stored || used() != 18 {
		t.Fatalf("after a replace: %d objects", used())
	}
	if v, _, ok := get(s, "k1"); !ok || v != "small" {
		t.Fatalf("replaced item reads %q, %v", v, ok)
	}
	if r := s.Set(ModeAppend, []byte("k2"), 0, 0, []byte("x"), 0); r != NotStored {
		t.Fatalf("append to a flash item: %v, want NotStored", r)
	}
	if r := s.Arith([]byte("k3"), ArithRequest{Delta: 1}, nil); r != NonNumeric {
		t.Fatalf("incr of a flash item: %v, want NonNumeric", r)
	}
	if !s.Touch([]byte("k4"), 1) || used() != 18 {
		t.Fatalf("touch of a flash item: %d objects", used())
	}
	clock.advance(2)
	if _, _, ok := get(s, "k4"); ok || used() != 17 {
		t.Fatalf("expired flash item: hit %v, %d objects", ok, used())
	}
	s.FlushAll(0)
	clock.advance(1)
	for i := 2; i < 20; i++ {
		get(s, fmt.Sprintf("k%d", i))
	}
	if used() != 0 {
		t.Fatalf("after flush_all: %d objects on flash", used())
	}
	checkInvariants(t, s)
}

// A read that finds a damaged record or a reclaimed page is a miss,
// counted, and the header goes.
func TestFlashReadFaults(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	const n = 200 // over one write buffer, so the first ones reach the file
	fillCold(t, s, clock, n)
	written := s.flushToFlash(clampTime(clock.Now()))
	if written < 100 {
		t.Fatalf("flushed %d", written)
	}
	fx.waitWrites(t, 2) // (the engine has taken the first as written once the second is)
	fx.flip.Store(true)
	misses := 0
	for i := range n {
		key := fmt.Sprintf("k%d", i)
		v, _, ok := get(s, key)
		if !ok {
			misses++
			continue
		}
		if v != string(flashValue(i)) {
			t.Fatalf("get %s: a wrong value", key)
		}
	}
	fs := s.FlashStats()
	if misses == 0 || fs.MissFromExtstore != uint64(misses) || fs.BadcrcFromExtstore != uint64(misses) {
		t.Fatalf("%d misses; stats %+v", misses, fs)
	}
	if flashItems(s) != written-misses {
		t.Fatalf("%d flash headers left, want %d", flashItems(s), written-misses)
	}
	checkInvariants(t, s)
}

// waitWrites waits until n buffers have reached the file.
func (fx *flashFixture) waitWrites(t testing.TB, n int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for fx.writes.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d buffers reached the file", fx.writes.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A location on a page reclaimed since reads stale: a miss, counted, not
// a bad record, and the header goes.
func TestFlashStaleMiss(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStore(t, fx, clock)
	const n = 200 // more than a page: the first one fills
	fillCold(t, s, clock, n)
	written := s.flushToFlash(clampTime(clock.Now()))
	evicted := 0
	for deadline := time.Now().Add(time.Minute); evicted == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no page filled and written")
		}
		for id, p := range fx.e.Pages(nil) {
			if p.Version != 0 && !p.Active {
				fx.e.EvictPage(uint16(id), p.Version)
				evicted++
			}
		}
	}
	for i := range n {
		if v, _, ok := get(s, fmt.Sprintf("k%d", i)); ok && v != string(flashValue(i)) {
			t.Fatalf("k%d: a wrong value", i)
		}
	}
	left := flashItems(s)
	fs := s.FlashStats()
	if left >= written || fs.MissFromExtstore != uint64(written-left) || fs.BadcrcFromExtstore != 0 {
		t.Fatalf("%d of %d flash headers left; stats %+v", left, written, fs)
	}
	checkInvariants(t, s)
}

// With ext_item_age at memcached's default (never), only memory pressure
// writes: a class at the limit and short of free chunks pushes its COLD
// tail out until it has a page's worth free.
func TestFlashMemoryPressure(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newManualStore(t, Config{
		MemoryLimit: 4 << 20,
		Shards:      1,
		Now:         clock.Now,
		Flash:       &FlashConfig{Engine: fx.e, ItemSize: 512, ItemAge: ^uint32(0)},
	})
	for i := range 100 {
		s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, flashValue(i), 0)
	}
	maintainUntilIdle(s, clock)
	if n := s.flushToFlash(clampTime(clock.Now())); n != 0 {
		t.Fatalf("flushed %d items with memory to spare", n)
	}
	for i := 100; i < 3000; i++ {
		s.Set(ModeSet, fmt.Appendf(nil, "k%d", i), 0, 0, flashValue(i), 0)
	}
	maintainUntilIdle(s, clock)
	// A round moves nothing while every write buffer is queued for the
	// disk (ErrBusy, retried next round), so "nothing more to move" is
	// decided only by a round after the writes caught up.
	n := 0
	caughtUp := false
	for range 100 { // rounds of the loop, each bounded
		k := s.flushToFlash(clampTime(clock.Now()))
		n += k
		if k > 0 {
			caughtUp = false
			continue
		}
		if caughtUp {
			break
		}
		fx.e.WaitWrites()
		caughtUp = true
	}
	if n == 0 {
		t.Fatal("nothing flushed at the memory limit")
	}
	c := &s.slabs.classes[s.ItemClass(3, 2000, 0)]
	c.mu.Lock()
	free, per := c.freeChunks(), c.perPage
	c.mu.Unlock()
	if free < per && fx.e.Stats().PagesFree > 0 {
		t.Fatalf("after %d writes the class has %d free chunks, under a page (%d)", n, free, per)
	}
	checkInvariants(t, s)
}

// Compaction reads a fragmented page back, writes the records whose items
// still point at it elsewhere, and reclaims it: every item still reads.
func TestFlashCompaction(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStoreFor(t, clock, FlashConfig{Engine: fx.e, ItemSize: 512, ItemAge: 10, Policy: extstore.Policy{CompactUnder: 8, DropUnder: 0, MaxFrag: 0.8}})
	const n = 200 // a full page and more
	fillCold(t, s, clock, n)
	written := s.flushToFlash(clampTime(clock.Now()))
	if written != n {
		t.Fatalf("flushed %d of %d", written, n)
	}
	full := -1
	for deadline := time.Now().Add(time.Minute); full < 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no page filled and written")
		}
		for id, p := range fx.e.Pages(nil) {
			if p.Version != 0 && !p.Active {
				full = id
			}
		}
	}
	// Delete three items in four: the full page is mostly garbage.
	kept := map[int]bool{}
	for i := range n {
		if i%4 == 0 {
			kept[i] = true
			continue
		}
		s.Delete(fmt.Appendf(nil, "k%d", i))
	}
	reclaims := fx.e.Stats().PageReclaims
	if done, _ := s.compactOnce(); !done {
		t.Fatal("no page compacted")
	}
	if fx.e.Stats().PageReclaims == reclaims {
		t.Fatal("the compacted page was not reclaimed")
	}
	if fs := s.FlashStats(); fs.CompactRescues == 0 || fs.CompactLost != 0 {
		t.Fatalf("compaction stats %+v", fs)
	}
	for i := range kept {
		if v, _, ok := get(s, fmt.Sprintf("k%d", i)); !ok || v != string(flashValue(i)) {
			t.Fatalf("k%d after compaction: hit %v, %d bytes", i, ok, len(v))
		}
	}
	if fs := s.FlashStats(); fs.MissFromExtstore != 0 {
		t.Fatalf("misses after compaction: %+v", fs)
	}
	checkInvariants(t, s)
}

// ext_recache_rate: an item read again since it was first fetched comes
// back into RAM on one read in RecacheRate, its CAS kept.
func TestFlashRecache(t *testing.T) {
	fx := openFlash(t)
	clock := newFakeClock()
	s := newFlashStoreFor(t, clock, FlashConfig{Engine: fx.e, ItemSize: 512, RecacheRate: 1})
	set(s, "k", string(flashValue(1)))
	_, m0, _ := get(s, "k") // fetched once in RAM
	if !s.MoveToFlash([]byte("k")) {
		t.Fatal("not moved to flash")
	}
	for i := range 2 {
		v, m, ok := get(s, "k")
		if !ok || v != string(flashValue(1)) || m.CAS != m0.CAS {
			t.Fatalf("read %d: hit %v, cas %d want %d", i, ok, m.CAS, m0.CAS)
		}
	}
	fs := s.FlashStats()
	if fs.RecacheFromExtstore != 1 || fs.GetExtstore != 1 || flashItems(s) != 0 || fx.e.Stats().ObjectsUsed != 0 {
		t.Fatalf("after two reads: %+v, %d flash items, %d objects", fs, flashItems(s), fx.e.Stats().ObjectsUsed)
	}
	checkInvariants(t, s)
}

// With extstore on, an idle store's loop still wakes only about once a
// second, and the compactor is not woken at all.
func TestFlashIdleWakes(t *testing.T) {
	t.Parallel()
	fx := openFlash(t)
	s := newTestStore(t, Config{MemoryLimit: 1 << 20, Flash: &FlashConfig{Engine: fx.e}})
	const window = 2 * time.Second
	before := s.wakes.Load()
	time.Sleep(window)
	if n := s.wakes.Load() - before; n > 4 {
		t.Fatalf("idle store's loop ran %d rounds in %v, want about 2", n, window)
	}
	if n := s.flash.compactRounds.Load(); n != 0 {
		t.Fatalf("idle store's compactor woke %d times", n)
	}
}

// A chained item (larger than slab_chunk_max) goes to flash whole, in the
// chunked bucket, reads back, and its delete frees the record.
func TestFlashChainedItem(t *testing.T) {
	e := openTestEngine(t, 8<<20, 2<<20, 1<<20, nil)
	s := newManualStore(t, Config{MemoryLimit: 64 << 20, Shards: 1, Flash: &FlashConfig{Engine: e}})
	big := bytes.Repeat([]byte("0123456789abcdef"), 700<<10/16)
	putOnFlash(t, s, "big", 7, big)
	checkInvariants(t, s)
	v, m, ok := get(s, "big")
	if !ok || v != string(big) || m.Flags != 7 {
		t.Fatalf("chained flash item: hit %v, %d bytes, flags %d", ok, len(v), m.Flags)
	}
	if n := e.Stats().ObjectsUsed; n != 1 {
		t.Fatalf("%d objects on flash, want 1", n)
	}
	if !s.Delete([]byte("big")) || e.Stats().ObjectsUsed != 0 {
		t.Fatal("deleting the chained flash item left its record")
	}
	checkInvariants(t, s)
}
