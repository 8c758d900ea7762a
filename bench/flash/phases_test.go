package flash

import (
	"bufio"
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/bench"
)

func testKeys(t *testing.T, n int) *bench.KeySpace {
	t.Helper()
	ks, err := bench.NewKeySpace(n, bench.Fixed{Value: 12})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestParseMetaDebug(t *testing.T) {
	header := map[int]bool{1: true}
	for line, want := range map[string]Where{
		"EN\r\n": Missing,
		"ME k exp=-1 la=3 cas=7 fetch=no cls=1 size=8000\r\n":   OnFlash,
		"ME k exp=-1 la=3 cas=7 fetch=yes cls=20 size=8000\r\n": InRAM,
	} {
		got, err := parseMetaDebug([]byte(line), header)
		if err != nil || got != want {
			t.Errorf("%q: got %v, %v; want %v", line, got, err, want)
		}
	}
	for _, bad := range []string{"ERROR\r\n", "ME k exp=-1 size=10\r\n", "ME k cls=x\r\n"} {
		if _, err := parseMetaDebug([]byte(bad), header); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestHeaderClasses(t *testing.T) {
	slabs := Stats{"1:chunk_size": "96", "2:chunk_size": "120", "18:chunk_size": "4544",
		"18:used_chunks": "3", "active_slabs": "3", "total_malloced": "100"}
	got := headerClasses(slabs, 4096)
	if len(got) != 2 || !got[1] || !got[2] {
		t.Errorf("headerClasses = %v, want classes 1 and 2", got)
	}
}

func TestReadGet(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("VALUE k 0 3\r\nabc\r\nEND\r\nEND\r\nVALUE k 0 3\r\nabc\r\nXX\r\n"))
	if n, hit, err := readGet(r); err != nil || !hit || n != 3 {
		t.Errorf("hit: got %d, %v, %v", n, hit, err)
	}
	if _, hit, err := readGet(r); err != nil || hit {
		t.Errorf("miss: got %v, %v", hit, err)
	}
	if _, _, err := readGet(r); err == nil {
		t.Error("a value not followed by END was accepted")
	}
	if _, _, err := readGet(bufio.NewReader(strings.NewReader("SERVER_ERROR out of memory\r\n"))); err == nil {
		t.Error("an error reply was taken for a get reply")
	}
}

// TestPhasesAgainstFakeServer runs the write, census, plain and tagged get
// phases, with fills, against a server that says which keys are on flash.
func TestPhasesAgainstFakeServer(t *testing.T) {
	s := newFakeServer(t)
	const n = 200
	ks := testKeys(t, n)
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 100 + i
	}
	ctx := context.Background()
	lr, err := writeAll(ctx, s.addr(), ks, sizes, 0, time.Now().Add(time.Minute))
	if err != nil || lr.Stored != n || lr.Refused != 0 {
		t.Fatalf("write: %+v, %v", lr, err)
	}
	// Half the keys go to flash, a quarter is evicted.
	s.mu.Lock()
	for i := range n {
		k := string(ks.AppendKey(nil, i))
		switch i % 4 {
		case 0, 1:
			s.flash[k] = true
		case 2:
			delete(s.items, k)
		}
	}
	s.mu.Unlock()
	where, header, err := classify(ctx, s.addr(), ks, 100, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c := census(where); c != (Census{n / 4, n / 4, n / 2}) {
		t.Errorf("census %v, want [%d %d %d]", c, n/4, n/4, n/2)
	}
	z, err := NewZipf(n, 0.5)
	if err != nil {
		t.Fatal(err)
	}

	// Bounded by count, no fills: misses stay misses.
	tl, err := runGets(ctx, s.addr(), ks, sizes, z, GetPhase{Conns: 3, Requests: 500, Time: time.Minute, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Gets != 500 || tl.Hits+tl.Misses != 500 || tl.Errors != 0 || tl.Fills != 0 {
		t.Errorf("plain phase: %d gets, %d hits, %d misses, %d errors, %d fills", tl.Gets, tl.Hits, tl.Misses, tl.Errors, tl.Fills)
	}
	if tl.All.TotalCount() != 500 || tl.HitsBy != [numWhere]int64{} {
		t.Errorf("plain phase: %d latencies, tagged %v; want 500, none tagged", tl.All.TotalCount(), tl.HitsBy)
	}

	// Tagged, with fills: every flash hit the client files is one the
	// server read from flash, and every miss is filled.
	before, err := readStats(s.addr())
	if err != nil {
		t.Fatal(err)
	}
	tt, err := runGets(ctx, s.addr(), ks, sizes, z, GetPhase{Conns: 2, Requests: 400, Time: time.Minute, Seed: 2, Tag: header, Fill: true})
	if err != nil {
		t.Fatal(err)
	}
	after, err := readStats(s.addr())
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	rec.fillTagged(tt, before, after)
	if rec.Agreement() != 1 || rec.TaggedFlashHits == 0 || rec.RAM.Count == 0 {
		t.Errorf("tagged phase: %d flash hits against %d flash reads, %d RAM hits", rec.TaggedFlashHits, rec.TaggedGetExtstore, rec.RAM.Count)
	}
	if tt.Fills != tt.Misses || tt.FillsRefused != 0 || tt.Fills == 0 {
		t.Errorf("fills %d (refused %d) for %d misses", tt.Fills, tt.FillsRefused, tt.Misses)
	}
	if tt.HitsBy[InRAM]+tt.HitsBy[OnFlash]+tt.HitsBy[Missing] != tt.Hits {
		t.Errorf("tagged hits %v do not add up to %d", tt.HitsBy, tt.Hits)
	}
}

func TestGetPhaseEndsOnTime(t *testing.T) {
	s := newFakeServer(t)
	ks := testKeys(t, 10)
	sizes := make([]int, 10)
	z, err := NewZipf(10, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tl, err := runGets(context.Background(), s.addr(), ks, sizes, z, GetPhase{Conns: 2, Requests: 1 << 40, Time: 200 * time.Millisecond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second || tl.Gets == 0 {
		t.Errorf("phase of 200ms took %v for %d gets", d, tl.Gets)
	}
}

func TestWrongLengthIsAnError(t *testing.T) {
	s := newFakeServer(t)
	ks := testKeys(t, 1)
	if _, err := writeAll(context.Background(), s.addr(), ks, []int{50}, 0, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	z, err := NewZipf(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := runGets(context.Background(), s.addr(), ks, []int{60}, z, GetPhase{Conns: 1, Requests: 3, Time: time.Minute, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Errors != 3 || tl.FirstError == "" {
		t.Errorf("%d errors (%q), want 3", tl.Errors, tl.FirstError)
	}
}

func TestWriteAllPaces(t *testing.T) {
	s := newFakeServer(t)
	ks := testKeys(t, 64)
	sizes := make([]int, 64)
	for i := range sizes {
		sizes[i] = 1000
	}
	start := time.Now()
	// 64 kB at 320 kB/s: the second batch of 32 is due after 100 ms.
	lr, err := writeAll(context.Background(), s.addr(), ks, sizes, 320_000, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 190*time.Millisecond || lr.Bytes != 64000 {
		t.Errorf("64 kB at 320 kB/s took %v (%d bytes), want about 200ms", d, lr.Bytes)
	}
}

func TestFileCacheHelpers(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/f"
	if n, err := fileCached(path); n != 0 || err != nil || fileBlocks(path) != 0 {
		t.Errorf("missing file: cached %d, %v, blocks %d", n, err, fileBlocks(path))
	}
	if err := dropFileCache(path); err != nil {
		t.Errorf("dropping a missing file: %v", err)
	}
	if err := os.WriteFile(path, make([]byte, 1<<16), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := fileCached(path); err != nil || n <= 0 || n > 1<<16 {
		t.Errorf("a file just written: %d bytes cached, %v", n, err)
	}
	if err := dropFileCache(path); err != nil {
		t.Fatal(err)
	}
	if n, err := fileCached(path); err != nil || n != 0 {
		t.Errorf("after the drop: %d bytes cached, %v", n, err)
	}
	if fileBlocks(path) < 1<<16 {
		t.Errorf("blocks %d, want at least 64 KiB", fileBlocks(path))
	}
}

func TestGetPhaseWithoutServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	z, err := NewZipf(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runGets(context.Background(), addr, testKeys(t, 1), []int{1}, z, GetPhase{Conns: 2, Requests: 1, Time: time.Second}); err == nil {
		t.Error("a phase without a server succeeded")
	}
}
