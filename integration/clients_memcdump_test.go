package integration

// The dump modes of memcached-tool (keys, dump: `lru_crawler metadump all`)
// and libmemcached's memcdump (`stats cachedump`): the checks of their
// output, and TestMemcdump.

import (
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMemcdump lists the keys with libmemcached's memcdump (stats items,
// then stats cachedump per class) on memcached and every engine: every key
// of the data set once.
func TestMemcdump(t *testing.T) {
	requireTool(t, "memcdump")
	compareToolModes(t, []toolMode{memcdumpMode})
}

// memcdumpMode runs memcdump until it lists every key, for up to 30 s:
// memcached's cachedump walks only the COLD LRU, so it lists a new
// item once its LRU maintainer has moved it there (within a second or so).
var memcdumpMode = toolMode{name: "memcdump", run: func(env *toolEnv) toolRun {
	path, err := exec.LookPath("memcdump")
	if err != nil {
		return toolRun{err: err}
	}
	var r toolRun
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if r = runBounded(path, "--servers="+env.addr); r.err != nil || len(lines(r.stdout)) >= len(env.items) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	return r
}, check: checkMemcdump, probe: "stats cachedump 1 0\r\n", normalise: func(_ *toolEnv, r toolRun) string {
	ks := strings.Fields(r.stdout)
	slices.Sort(ks)
	return strings.Join(ks, "\n")
}}

// metadumpLine is memcached 1.6.45's metadump line (flags= since 1.6.43,
// with the space memcached leaves after every field).
var (
	metadumpLine = regexp.MustCompile(`^key=(\S+) exp=(-?\d+) la=(\d+) cas=(\d+) fetch=(yes|no) cls=(\d+) size=(\d+) flags=(\d+) $`)
	dumpHeader   = regexp.MustCompile(`^add (\S+) (\d+) (-?\d+) (\d+)$`)
)

// metadumpEntry is one parsed `lru_crawler metadump` line.
type metadumpEntry struct {
	encoded, key, fetch string
	exp, la, cas        int64
	cls, size, flags    int
}

func parseMetadump(t *testing.T, l string) metadumpEntry {
	t.Helper()
	m := metadumpLine.FindStringSubmatch(l)
	if m == nil {
		t.Fatalf("line %q is not key=K exp=E la=L cas=C fetch=yes|no cls=N size=S flags=F", l)
	}
	key, err := url.PathUnescape(m[1])
	if err != nil {
		t.Fatalf("key %q is not URI-encoded: %v", m[1], err)
	}
	e := metadumpEntry{encoded: m[1], key: key, fetch: m[5]}
	e.exp, _ = strconv.ParseInt(m[2], 10, 64)
	e.la, _ = strconv.ParseInt(m[3], 10, 64)
	e.cas, _ = strconv.ParseInt(m[4], 10, 64)
	e.cls, _ = strconv.Atoi(m[6])
	e.size, _ = strconv.Atoi(m[7])
	e.flags, _ = strconv.Atoi(m[8])
	return e
}

// expiryOK: exp is -1 for an item without expiry, else the absolute time
// (±5 s, memcached's clock ticks once a second) it expires.
func (env *toolEnv) expiryOK(exp int64, it toolItem, never int64) bool {
	if it.ttl == 0 {
		return exp == never
	}
	at := env.loaded.Unix() + int64(it.ttl)
	return exp >= at-5 && exp <= time.Now().Unix()+int64(it.ttl)+5
}

func (env *toolEnv) item(key string) (toolItem, bool) {
	for _, it := range env.items {
		if it.key == key {
			return it, true
		}
	}
	return toolItem{}, false
}

// toolLimited is how many of n items memcached-tool's keys and dump modes
// list with limit: every one without; with one, a line fewer than the
// limit, since the tool counts every line of the metadump, and memcached
// 1.6.43 and later send OK before the items (as memcached-tool 1.6.45 does
// against memcached 1.6.45).
func toolLimited(limit, n int) int {
	if limit == 0 {
		return n
	}
	return limit - 1
}

// checkKeys: limit 0 lists every item once, with URI-encoded keys, the
// expiry, a last access since the load, distinct CAS values, fetch=yes
// exactly for the items read, a size that holds key and value, and the
// item's flags; a limit lists one fewer (toolLimited).
func checkKeys(limit int) func(t *testing.T, env *toolEnv, r toolRun) {
	return func(t *testing.T, env *toolEnv, r toolRun) {
		wantErr := "Dumping memcache keys\n"
		if limit > 0 {
			wantErr = fmt.Sprintf("Dumping memcache keys (limiting to %d keys)\n", limit)
		}
		if r.stderr != wantErr {
			t.Errorf("stderr %q, want %q", r.stderr, wantErr)
		}
		seen := map[string]bool{}
		cas := map[int64]bool{}
		for _, l := range lines(r.stdout) {
			e := parseMetadump(t, l)
			it, ok := env.item(e.key)
			switch {
			case !ok:
				t.Errorf("%q: not a key of the data set", l)
			case seen[e.key]:
				t.Errorf("%q: key listed twice", l)
			case e.encoded != url.QueryEscape(e.key):
				t.Errorf("%q: key not URI-encoded as memcached does (%s)", l, url.QueryEscape(e.key))
			case !env.expiryOK(e.exp, it, -1):
				t.Errorf("%q: exp, want -1 or now+%d", l, it.ttl)
			case e.la < env.loaded.Unix()-5 || e.la > time.Now().Unix()+5:
				t.Errorf("%q: la is not a time since the load (%d)", l, env.loaded.Unix())
			case e.cas <= 0 || cas[e.cas]:
				t.Errorf("%q: cas not positive and distinct", l)
			case (e.fetch == "yes") != it.fetched:
				t.Errorf("%q: fetch, want fetched=%v", l, it.fetched)
			case e.size < len(it.key)+len(it.value):
				t.Errorf("%q: size smaller than key and value (%d)", l, len(it.key)+len(it.value))
			case e.flags != it.flags:
				t.Errorf("%q: flags, want %d", l, it.flags)
			}
			seen[e.key], cas[e.cas] = true, true
		}
		if want := toolLimited(limit, len(env.items)); len(seen) != want {
			t.Errorf("%d keys listed, want %d", len(seen), want)
		}
	}
}

// normaliseKeys keeps, per key in key order, the encoded key, fetch and the
// size class; exp is -1 or "abs" (an absolute time); la, cas and size are
// times, CAS values and memory sizes.
func normaliseKeys(env *toolEnv, r toolRun) string {
	var out []string
	for _, l := range lines(r.stdout) {
		m := metadumpLine.FindStringSubmatch(l)
		if m == nil {
			out = append(out, "unparsed: "+l)
			continue
		}
		exp := m[2]
		if exp != "-1" {
			exp = "abs"
		}
		out = append(out, fmt.Sprintf("key=%s exp=%s fetch=%s cls=%s flags=%s", m[1], exp, m[5], m[6], m[8]))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// dumpRecord is one "add KEY FLAGS EXP LEN\r\nVALUE\r\n" of the dump mode.
type dumpRecord struct {
	key, value string
	flags      int
	exp        int64
}

func parseDump(t *testing.T, out string) []dumpRecord {
	t.Helper()
	var recs []dumpRecord
	for rest := out; rest != ""; {
		head, tail, ok := strings.Cut(rest, "\r\n")
		m := dumpHeader.FindStringSubmatch(head)
		if !ok || m == nil {
			t.Fatalf("dump: %q is not an add line", abbreviate(rest))
		}
		n, _ := strconv.Atoi(m[4])
		if len(tail) < n+2 || tail[n:n+2] != "\r\n" {
			t.Fatalf("dump: %s: value of %d bytes not followed by CRLF", head, n)
		}
		r := dumpRecord{key: m[1], value: tail[:n]}
		r.flags, _ = strconv.Atoi(m[2])
		r.exp, _ = strconv.ParseInt(m[3], 10, 64)
		recs = append(recs, r)
		rest = tail[n+2:]
	}
	return recs
}

// checkDump: every item (with a limit, one fewer: toolLimited) as an add
// command that would restore it: key, flags, value, and 0 or the absolute
// expiry.
func checkDump(limit int) func(t *testing.T, env *toolEnv, r toolRun) {
	return func(t *testing.T, env *toolEnv, r toolRun) {
		wantErr := "Dumping memcache contents\n"
		if limit > 0 {
			wantErr = fmt.Sprintf("Dumping memcache contents (limiting to %d keys)\n", limit)
		}
		if r.stderr != wantErr {
			t.Errorf("stderr %q, want %q", r.stderr, wantErr)
		}
		seen := map[string]bool{}
		for _, rec := range parseDump(t, r.stdout) {
			it, ok := env.item(rec.key)
			switch {
			case !ok || seen[rec.key]:
				t.Errorf("add %s: unknown or repeated key", rec.key)
			case rec.flags != it.flags || rec.value != it.value:
				t.Errorf("add %s %d: flags or value (%d bytes) differ from the stored %d, %d bytes",
					rec.key, rec.flags, len(rec.value), it.flags, len(it.value))
			case !env.expiryOK(rec.exp, it, 0):
				t.Errorf("add %s: exptime %d, want 0 or now+%d", rec.key, rec.exp, it.ttl)
			}
			seen[rec.key] = true
		}
		if want := toolLimited(limit, len(env.items)); len(seen) != want {
			t.Errorf("%d items dumped, want %d", len(seen), want)
		}
	}
}

func normaliseDump(_ *toolEnv, r toolRun) string {
	var out []string
	for _, l := range strings.Split(r.stdout, "\r\n") {
		if m := dumpHeader.FindStringSubmatch(l); m != nil {
			exp := m[3]
			if exp != "0" {
				exp = "abs"
			}
			out = append(out, fmt.Sprintf("add %s %s %s %s", m[1], m[2], exp, m[4]))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// checkMemcdump: every key once, one per line.
func checkMemcdump(t *testing.T, env *toolEnv, r toolRun) {
	got := lines(r.stdout)
	var want []string
	for _, it := range env.items {
		want = append(want, it.key)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("memcdump listed %q, want %q", got, want)
	}
}

// TestMetadumpBusy: memcached runs one metadump at a time (its single LRU
// crawler): while one client's dump is stuck on a client that does not
// read, another client's metadump and crawl answer BUSY; once the stuck
// client has gone, the crawler is free again. Every engine as memcached.
func TestMetadumpBusy(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		p := startServer(t, tg)
		load := dialRaw(t, p.Addr())
		var sets strings.Builder
		// A dump of some 12 MB: more than the socket buffers between the
		// server and a client that does not read can absorb.
		for i := range 120000 {
			fmt.Fprintf(&sets, "set busykey%06d 0 0 10 noreply\r\n0123456789\r\n", i)
		}
		load.send(sets.String())
		if v := load.roundTrip("version\r\n"); !strings.HasPrefix(v, "VERSION ") {
			t.Fatalf("after the load: %q", v)
		}

		stuck := dialRaw(t, p.Addr())
		stuck.conn.(*net.TCPConn).SetReadBuffer(4096)
		stuck.send("lru_crawler metadump all\r\n") // never read
		other := dialRaw(t, p.Addr())
		// Wait for the stuck dump to hold the crawler before crawling:
		// the server may read other's crawl before stuck's dump (a loaded
		// machine, another engine's order), and a crawl running first
		// would turn the dump away with BUSY, leaving nothing stuck.
		for deadline := time.Now().Add(30 * time.Second); ; {
			other.send("stats\r\n")
			st, err := other.readUntil("END\r\n", 10*time.Second)
			if err != nil {
				t.Fatalf("stats: %v", err)
			}
			if strings.Contains(st, "STAT lru_crawler_running 1\r\n") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the stuck client's metadump never held the crawler (lru_crawler_running stayed 0)")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// memcached's crawler keeps lru_crawler_lock while it waits on a
		// client that does not read (crawler.c: a 1 s poll, up to 1800
		// tries), and a crawl request takes that lock before it can say
		// BUSY: once the dump is stuck, memcached's worker blocks instead
		// of answering. Only gocached is held to BUSY at once; memcached
		// is held to the rest: the dump holds the crawler, and the crawler
		// is free again when the stuck client leaves.
		if !tg.isReference() {
			busy := "BUSY currently processing crawler request\r\n"
			var got string
			for deadline := time.Now().Add(30 * time.Second); ; {
				// The dump may need a moment to fill the socket buffers.
				if got = other.roundTrip("lru_crawler crawl all\r\n"); got == busy || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got != busy {
				t.Fatalf("crawl during a stuck dump: %q, want %q", got, busy)
			}
			if got := other.roundTrip("lru_crawler metadump all\r\n"); got != busy {
				t.Errorf("metadump during a stuck dump: %q, want %q", got, busy)
			}
		}
		stuck.conn.Close()
		var got string
		for deadline := time.Now().Add(30 * time.Second); ; {
			if got = other.roundTrip("lru_crawler crawl all\r\n"); got == "OK\r\n" || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got != "OK\r\n" {
			t.Errorf("crawl after the stuck client left: %q, want OK", got)
		}
	})
}
