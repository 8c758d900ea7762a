package protocol

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// metadumpLine is memcached 1.6.18's lru_crawler metadump line.
var metadumpLine = regexp.MustCompile(`^key=(\S+) exp=(-1|\d+) la=\d+ cas=\d+ fetch=(yes|no) cls=\d+ size=\d+ flags=\d+ $`)

// normalizeDump sorts a metadump's lines and blanks the times and CAS
// values, which differ between two servers.
func normalizeDump(t *testing.T, out string) []string {
	t.Helper()
	// memcached 1.6.43 on: OK, the lines, END.
	body, ok := strings.CutSuffix(out, "END\r\n")
	body, okFirst := strings.CutPrefix(body, "OK\r\n")
	if !ok || !okFirst {
		t.Fatalf("metadump is not OK, lines, END: %q", abbrev(out))
	}
	var ls []string
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if l == "" {
			continue
		}
		if !metadumpLine.MatchString(l) {
			t.Fatalf("bad metadump line %q", l)
		}
		l = regexp.MustCompile(`exp=\d+`).ReplaceAllString(l, "exp=T")
		l = regexp.MustCompile(`la=\d+`).ReplaceAllString(l, "la=T")
		l = regexp.MustCompile(`cas=\d+`).ReplaceAllString(l, "cas=C")
		ls = append(ls, l)
	}
	slices.Sort(ls)
	return ls
}

var dumpSetup = "set foo 5 0 3\r\nbar\r\nset k2 0 100 2\r\nhi\r\nset a%b 0 0 1\r\nx\r\nset big 1 0 300\r\n" +
	strings.Repeat("x", 300) + "\r\nget foo\r\n"

var dumpWant = []string{
	"key=a%25b exp=-1 la=T cas=C fetch=no cls=1 size=63 flags=0 ",
	"key=big exp=-1 la=T cas=C fetch=no cls=7 size=366 flags=1 ",
	"key=foo exp=-1 la=T cas=C fetch=yes cls=1 size=69 flags=5 ",
	"key=k2 exp=T la=T cas=C fetch=no cls=1 size=63 flags=0 ",
}

func TestMetadump(t *testing.T) {
	env := newSmallEnv(t)
	s := NewSession(env)
	drive(t, s, []byte(dumpSetup))
	if got := normalizeDump(t, drive(t, s, []byte("lru_crawler metadump all\r\n")).out); !slices.Equal(got, dumpWant) {
		t.Fatalf("metadump all:\n%s", strings.Join(got, "\n"))
	}
	got := normalizeDump(t, drive(t, s, []byte("lru_crawler metadump 7\r\n")).out)
	if !slices.Equal(got, dumpWant[1:2]) {
		t.Fatalf("metadump 7:\n%s", strings.Join(got, "\n"))
	}
	got = normalizeDump(t, drive(t, s, []byte("lru_crawler metadump 2,3,1\r\n")).out)
	if !slices.Equal(got, []string{dumpWant[0], dumpWant[2], dumpWant[3]}) {
		t.Fatalf("metadump 2,3,1:\n%s", strings.Join(got, "\n"))
	}
}

func TestMetadumpAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startRefMemcached(t) // the lines are 1.6.45's (OK first, flags=)
	exchange(t, addr, dumpSetup, len(lines("STORED", "STORED", "STORED", "STORED", "VALUE foo 5 3", "bar", "END")))
	// memcached's crawler walks an LRU while its LRU maintainer moves the
	// items just stored and fetched between LRUs, and misses one moved
	// past it: the dump is taken again until it is whole (at most
	// memcachedWait).
	var got []string
	for deadline := time.Now().Add(memcachedWait); ; {
		// (memcached drops what is pipelined after a metadump: END
		// ends the reply.)
		got = normalizeDump(t, exchangeUntil(t, addr, "lru_crawler metadump all\r\n", "END\r\n"))
		if slices.Equal(got, dumpWant) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("memcached's metadump:\n%s", strings.Join(got, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMetadumpStreams checks that an engine resuming pending Sessions gets
// a large metadump in bounded parts, every item once, END last.
func TestMetadumpStreams(t *testing.T) {
	t.Parallel()
	env := newTestEnvMem(t, 16<<20)
	env.ResumesPending = true
	s := NewSession(env)
	const n = 30000
	key := strings.Repeat("k", 100)
	for i := range n {
		drive(t, s, []byte(fmt.Sprintf("set %s%d 0 0 1 noreply\r\nx\r\n", key, i)))
	}
	consumed, out, st := s.Process([]byte("lru_crawler metadump all\r\nversion\r\n"), nil)
	var all []byte
	calls := 0
	for {
		calls++
		if len(out) > OutputBudget+512 {
			t.Fatalf("one call wrote %d bytes", len(out))
		}
		all = append(all, out...)
		if !s.Pending() {
			break
		}
		if st != NeedMore {
			t.Fatalf("paused dump returned %v (a conn_yield is for -R only)", st)
		}
		var c int
		c, out, st = s.Process([]byte("version\r\n")[:0], nil)
		consumed += c
	}
	if calls < 3 {
		t.Fatalf("%d bytes in %d calls: not streamed", len(all), calls)
	}
	// The pipelined version runs after the dump.
	_, out, _ = s.Process([]byte("lru_crawler metadump all\r\nversion\r\n")[consumed:], nil)
	if string(out) != "VERSION 1.6.18\r\n" {
		t.Fatalf("after the dump: %q", out)
	}
	seen := map[string]bool{}
	for _, l := range normalizeDump(t, string(all)) {
		k := strings.Fields(l)[0]
		if seen[k] {
			t.Fatalf("%s listed twice", k)
		}
		seen[k] = true
	}
	if len(seen) != n {
		t.Fatalf("%d keys listed, want %d", len(seen), n)
	}
	if s.Pending() {
		t.Fatal("still pending after END")
	}
}

func TestMetadumpWholeWithoutResume(t *testing.T) {
	t.Parallel()
	env := newTestEnvMem(t, 16<<20)
	s := NewSession(env)
	for i := range 20000 {
		drive(t, s, []byte(fmt.Sprintf("set %s%d 0 0 1 noreply\r\nx\r\n", strings.Repeat("k", 100), i)))
	}
	_, out, st := s.Process([]byte("lru_crawler metadump all\r\n"), nil)
	if st != NeedMore || s.Pending() || len(normalizeDump(t, string(out))) != 20000 {
		t.Fatalf("status %v pending %v, %d bytes", st, s.Pending(), len(out))
	}
}

func TestCachedumpLimits(t *testing.T) {
	env := newSmallEnv(t)
	s := NewSession(env)
	for i := range 50 {
		drive(t, s, []byte(fmt.Sprintf("set k%02d 0 0 1 noreply\r\nx\r\n", i)))
	}
	drive(t, s, []byte("set big 0 0 1000 noreply\r\n"+strings.Repeat("v", 1000)+"\r\n"))
	out := drive(t, s, []byte("stats cachedump 1 10\r\n")).out
	if n := strings.Count(out, "ITEM k"); n != 10 || !strings.HasSuffix(out, "END\r\n") {
		t.Fatalf("limit 10: %q", out)
	}
	out = drive(t, s, []byte("stats cachedump 1 0\r\n")).out
	if n := strings.Count(out, "ITEM k"); n != 50 || !strings.Contains(out, "ITEM k07 [1 b; 0 s]\r\n") {
		t.Fatalf("limit 0: %q", out)
	}
	cls := env.Store.ItemClass(3, 1000, 0)
	out = drive(t, s, []byte(fmt.Sprintf("stats cachedump %d 0\r\n", cls))).out
	if out != "ITEM big [1000 b; 0 s]\r\nEND\r\n" {
		t.Fatalf("class %d: %q", cls, out)
	}
}

func TestCacheMemlimitStopsGrowth(t *testing.T) {
	env := newTestEnvMem(t, 16<<20)
	s := NewSession(env)
	got := drive(t, s, []byte("cache_memlimit 32\r\nstats settings\r\nstats\r\n")).out
	if !strings.HasPrefix(got, "OK\r\n") || !strings.Contains(got, "STAT maxbytes 33554432\r\n") ||
		!strings.Contains(got, "STAT limit_maxbytes 33554432\r\n") || env.Store.MemoryLimit() != 32<<20 {
		t.Fatalf("grow: %q", abbrev(got))
	}
	for i := range 40000 {
		drive(t, s, []byte(fmt.Sprintf("set k%d 0 0 500 noreply\r\n%s\r\n", i, strings.Repeat("v", 500))))
	}
	if got := drive(t, s, []byte("cache_memlimit 8\r\n")).out; got != "OK\r\n" {
		t.Fatalf("shrink: %q", got)
	}
	// As memcached: the classes keep their pages and stop growing, so
	// further stores evict.
	before := env.Store.Stats()
	for i := range 20000 {
		drive(t, s, []byte(fmt.Sprintf("set m%d 0 0 500 noreply\r\n%s\r\n", i, strings.Repeat("w", 500))))
	}
	if st := env.Store.Stats(); st.TotalMallocedBytes != before.TotalMallocedBytes || st.Evictions == 0 {
		t.Fatalf("after shrink: malloced %d -> %d, %d evictions", before.TotalMallocedBytes, st.TotalMallocedBytes, st.Evictions)
	}
}

// TestMetadumpAfterFlushPoints: memcached sends its replies at mn (and
// 1.6.18 at a retrieval command), so a metadump right after one of them is
// not "pipelined".
func TestMetadumpAfterFlushPoints(t *testing.T) {
	for in, want := range map[string]string{
		"mn\r\nlru_crawler metadump all\r\n": lines("MN", "OK", "END"),
		// memcached 1.6.40 on no longer writes out a get's replies at
		// its END: the dump is refused as pipelined.
		"get a\r\nlru_crawler metadump all\r\n": lines("END", "ERROR cannot pipeline other commands before metadump"),
		"mg a\r\nlru_crawler metadump all\r\n":  lines("EN", "ERROR cannot pipeline other commands before metadump"),
	} {
		if got := driveFresh(t, newTinyEnv, []byte(in)).out; got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestMetadumpOneAtATime: memcached has one LRU crawler, so while a
// metadump streams to one client another client's metadump or crawl
// answers BUSY; the crawler is free again once the dump has ended, or once
// its client has gone mid-dump.
func TestMetadumpOneAtATime(t *testing.T) {
	env := newTestEnv(t)
	env.ResumesPending = true
	var load strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&load, "set key%06d 0 0 1 noreply\r\nx\r\n", i)
	}
	drive(t, NewSession(env), []byte(load.String()))

	a := NewSession(env)
	// One Process call: the dump stops at the output budget, pending.
	if _, out, st := a.Process([]byte("lru_crawler metadump all\r\n"), nil); st == Close || !a.Pending() || len(out) == 0 {
		t.Fatalf("the dump did not stay pending (status %v, %d bytes)", st, len(out))
	}
	b := NewSession(env)
	busy := lines("BUSY currently processing crawler request")
	for _, cmd := range []string{"lru_crawler metadump all\r\n", "lru_crawler metadump 1\r\n", "lru_crawler crawl all\r\n"} {
		if got := drive(t, b, []byte(cmd)); got.out != busy {
			t.Errorf("%q during another dump: %q, want %q", cmd, got.out, busy)
		}
	}
	// Bad classes are refused before the crawler is asked, as in memcached.
	if got := drive(t, b, []byte("lru_crawler metadump 0\r\n")); got.out != lines("BADCLASS invalid class id") {
		t.Errorf("bad class during a dump: %q", got.out)
	}
	a.Reset() // its client went away mid-dump
	if got := drive(t, b, []byte("lru_crawler metadump all\r\n")); !strings.HasSuffix(got.out, "END\r\n") {
		t.Errorf("after the first dump's client left, a dump gives %d bytes ending %q", len(got.out), got.out[max(0, len(got.out)-20):])
	}
	// That dump ran to its END: the crawler is free.
	if got := drive(t, NewSession(env), []byte("lru_crawler crawl all\r\n")); got.out != lines("OK") {
		t.Errorf("crawl after a finished dump: %q", got.out)
	}
	// A Session dropped after a panic (the engine calls Abandon, not
	// Reset) frees the crawler too.
	c := NewSession(env)
	if _, _, _ = c.Process([]byte("lru_crawler metadump all\r\n"), nil); !c.Pending() {
		t.Fatal("the third dump did not stay pending")
	}
	c.Abandon()
	if got := drive(t, NewSession(env), []byte("lru_crawler crawl all\r\n")); got.out != lines("OK") {
		t.Errorf("crawl after an abandoned dump: %q", got.out)
	}
}
