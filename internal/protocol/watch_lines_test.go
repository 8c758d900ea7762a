package protocol

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// Watch lines past the basics: a store logged as the cache then holds the
// item (an append's whole value, the TTL it kept), meta's me and ma's
// auto-create, and the binary protocol, which memcached logs as it logs
// text: its lookups and stores go through the same item code.

// watchStoredTraffic is logged identically by memcached and gocached.
const watchStoredTraffic = "set ap 0 300 3\r\nabc\r\nappend ap 0 0 5\r\ndefgh\r\nprepend ap 0 0 2\r\nXY\r\n" +
	"ms ap 2 I C1\r\nzz\r\nme ap\r\nma vv N0 J42\r\nget vv\r\nquit\r\n"

// watchStoredWant is what memcached 1.6.18 logs for watchStoredTraffic:
// the append and prepend show the whole value and the TTL the item kept,
// as does the stale CAS (I); ma's auto-create looks the key up again and
// logs an add, with TTL 0 whatever N says (memcached sets it afterwards).
var watchStoredWant = []string{
	"type=item_get key=ap status=not_found clsid=0 size=0",
	"type=item_store key=ap status=stored cmd=set ttl=300 clsid=1 size=3",
	"type=item_get key=ap status=found clsid=1 size=3",
	"type=item_store key=ap status=stored cmd=append ttl=300 clsid=1 size=8",
	"type=item_get key=ap status=found clsid=1 size=8",
	"type=item_store key=ap status=stored cmd=prepend ttl=300 clsid=1 size=10",
	"type=item_get key=ap status=found clsid=1 size=10",
	"type=item_store key=ap status=stored cmd=cas ttl=300 clsid=1 size=2",
	"type=item_get key=ap status=found clsid=1 size=2",
	"type=item_get key=vv status=not_found clsid=0 size=0",
	"type=item_get key=vv status=not_found clsid=0 size=0",
	"type=item_store key=vv status=stored cmd=add ttl=0 clsid=1 size=2",
	"type=item_get key=vv status=found clsid=1 size=2",
}

// watchBinaryTraffic is binary requests memcached and gocached log alike.
func watchBinaryTraffic() string {
	setExt := string(make([]byte, 8)) // flags 0, exptime 0
	var arith [20]byte
	binary.BigEndian.PutUint64(arith[0:8], 1)    // delta
	binary.BigEndian.PutUint64(arith[8:16], 100) // initial
	touchExt := string(make([]byte, 4))
	return binReq(opSet, "bk", setExt, "hello", 1, 0) +
		binReq(opGet, "bk", "", "", 2, 0) +
		binReq(opGetK, "nope", "", "", 3, 0) +
		binReq(opAppend, "bk", "", "AAAA", 4, 0) +
		binReq(opSet, "bk", setExt, "stale", 5, 1) + // a CAS that does not match
		binReq(opIncrement, "ctr", string(arith[:]), "", 6, 0) + // creates ctr = 100
		binReq(opIncrement, "ctr", string(arith[:]), "", 7, 0) +
		binReq(opTouch, "bk", touchExt, "", 8, 0) +
		binReq(opDelete, "bk", "", "", 9, 0) +
		binReq(opQuit, "", "", "", 10, 0)
}

// watchBinaryWant is what memcached 1.6.18 logs for watchBinaryTraffic.
var watchBinaryWant = []string{
	"type=item_get key=bk status=not_found clsid=0 size=0",
	"type=item_store key=bk status=stored cmd=set ttl=0 clsid=1 size=5",
	"type=item_get key=bk status=found clsid=1 size=5",
	"type=item_get key=nope status=not_found clsid=0 size=0",
	"type=item_get key=bk status=found clsid=1 size=5",
	"type=item_store key=bk status=stored cmd=append ttl=0 clsid=1 size=9",
	"type=item_get key=bk status=found clsid=1 size=9",
	"type=item_store key=bk status=exists cmd=cas ttl=0 clsid=1 size=5",
	"type=item_get key=ctr status=not_found clsid=0 size=0",
	"type=item_get key=ctr status=not_found clsid=0 size=0",
	"type=item_store key=ctr status=stored cmd=add ttl=0 clsid=1 size=3",
	"type=item_get key=ctr status=found clsid=1 size=3",
	"type=item_get key=bk status=found clsid=1 size=9",
	"type=item_get key=bk status=found clsid=1 size=9",
}

// watchedLines runs each traffic on its own client session while a
// watcher of fetchers and mutations listens, and returns the lines.
func watchedLines(t *testing.T, env *Env, traffics ...string) []string {
	t.Helper()
	w := NewSession(env)
	w.SetWakeup(func() {})
	w.Opened(40)
	if got := drive(t, w, []byte("watch fetchers mutations\r\n")); got.out != "OK\r\n" {
		t.Fatalf("watch: %q", got.out)
	}
	defer w.Reset()
	for i, traffic := range traffics {
		c := NewSession(env)
		c.Opened(41 + i)
		drive(t, c, []byte(traffic))
	}
	_, out, _ := w.Process(nil, nil)
	return normalizeWatch(t, string(out), "type=")
}

// watchStoredCases are the traffics compared with memcached's lines.
var watchStoredCases = []struct {
	name    string
	traffic string
	want    []string
}{
	{"stored", watchStoredTraffic, watchStoredWant},
	{"binary", watchBinaryTraffic(), watchBinaryWant},
}

func TestWatchStoredAndBinary(t *testing.T) {
	for _, tc := range watchStoredCases {
		got := watchedLines(t, newWatchEnv(t), tc.traffic)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: watch lines:\n%s", tc.name, strings.Join(got, "\n"))
		}
	}
}

// TestWatchMissesAndTTLs: what memcached's lines say of dead items and of
// exptimes that are not a plain relative one. memcached's lookup says
// "expired" or "flushed" when it meets such an item (its LRU maintainer
// may unlink one first, which is why these are not compared with it live),
// its store line shows the seconds left (so an absolute exptime shows as
// relative and one already past wraps), and a value over the size limit
// logs a too_large store with no item behind it, then the lookup that
// drops the key's old value.
func TestWatchMissesAndTTLs(t *testing.T) {
	env := newWatchEnv(t) // its clock stands at 1_700_000_000
	got := watchedLines(t, env, "set neg 0 -1 1\r\nx\r\nget neg\r\nset fl 0 0 1\r\nx\r\nflush_all\r\nget fl\r\n"+
		"set abs 0 1700000100 1\r\nx\r\nset big 0 0 2000000\r\n")
	want := []string{
		"type=item_get key=neg status=not_found clsid=0 size=0",
		"type=item_store key=neg status=stored cmd=set ttl=4294967295 clsid=1 size=1",
		"type=item_get key=neg status=expired clsid=0 size=0",
		"type=item_get key=fl status=not_found clsid=0 size=0",
		"type=item_store key=fl status=stored cmd=set ttl=0 clsid=1 size=1",
		"type=item_get key=fl status=flushed clsid=0 size=0",
		"type=item_get key=abs status=not_found clsid=0 size=0",
		"type=item_store key=abs status=stored cmd=set ttl=100 clsid=1 size=1",
		"type=item_store key=big status=too_large cmd=set ttl=0 clsid=0 size=0",
		"type=item_get key=big status=not_found clsid=0 size=0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("watch lines:\n%s", strings.Join(got, "\n"))
	}
	// One logged event per line, whoever read it (memcached's
	// log_worker_written).
	c := NewSession(env)
	if st := drive(t, c, []byte("stats\r\n")).out; !strings.Contains(st, "STAT log_worker_written 10\r\n") {
		t.Errorf("stats: %q", abbrev(st))
	}
}

func TestWatchStoredAndBinaryAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, tc := range watchStoredCases {
		got := memcachedWatchLines(t, addr, tc.traffic, len(tc.want))
		for i, l := range got {
			// memcached's clock may tick between the set and what follows.
			got[i] = strings.Replace(l, " ttl=299 ", " ttl=300 ", 1)
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: memcached's watch lines:\n%s", tc.name, strings.Join(got, "\n"))
		}
	}
}

// memcachedWatchLines runs traffic against the memcached at addr while a
// watcher of fetchers and mutations listens, and returns its lines: at
// least lines of them (see memcachedWatch).
func memcachedWatchLines(t *testing.T, addr, traffic string, lines int) []string {
	t.Helper()
	return normalizeWatch(t, memcachedWatch(t, addr, "fetchers mutations", traffic, lines), "type=")
}

// memcachedWatch runs traffic against the memcached at addr (reading all
// its replies, as exchangeAll does) while a watcher of kinds
// listens, and returns what the watcher got after its OK: the first lines
// lines, however long memcached's logger thread takes to hand them over
// (it sleeps up to a second between rounds, longer on a loaded machine),
// and any that follow them within watchQuiet.
func memcachedWatch(t *testing.T, addr, kinds, traffic string, lines int) string {
	t.Helper()
	wc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	wc.Write([]byte("watch " + kinds + "\r\n"))
	// memcached queues the OK as it registers the watcher, which sees only
	// what is logged from then on: traffic sent before the OK is read may
	// be served, and logged, before the watch command is.
	ok := make([]byte, len("OK\r\n"))
	wc.SetReadDeadline(time.Now().Add(watchWait))
	if _, err := io.ReadFull(wc, ok); err != nil || string(ok) != "OK\r\n" {
		t.Fatalf("memcached's watch reply: %q %v", ok, err)
	}
	exchangeAll(t, addr, traffic)
	var buf []byte
	b := make([]byte, 64<<10)
	for {
		wait := watchWait
		if bytes.Count(buf, []byte("\n")) >= lines && bytes.HasSuffix(buf, []byte("\n")) {
			wait = watchQuiet
		}
		wc.SetReadDeadline(time.Now().Add(wait))
		n, err := wc.Read(b)
		buf = append(buf, b[:n]...)
		if err != nil {
			break
		}
	}
	return string(buf)
}

// Bounds of memcachedWatch: the wait for the watcher's OK and for each
// read until the expected lines are in (a missing line fails the
// comparison only after it), and how long lines past those are waited for.
const (
	watchWait  = memcachedWait
	watchQuiet = 300 * time.Millisecond
)

// watchLongLines are watch lines with more tokens than memcached splits
// (23): what follows the last one split is not looked at, so a bad kind or
// a noreply there changes nothing.
// since: the memcached release after 1.6.18 whose reply want is.
var watchLongLines = []struct{ line, want, since string }{
	{"watch" + strings.Repeat(" fetchers", 30), "OK\r\n", ""},
	{"watch" + strings.Repeat(" fetchers", 22) + " bogus", "OK\r\n", ""},
	{"watch" + strings.Repeat(" fetchers", 21) + " bogus", "ERROR\r\n", ""},
	// watch takes no noreply in 1.6.45: the 23rd token is a bad kind.
	{"watch" + strings.Repeat(" fetchers", 21) + " noreply x", "ERROR\r\n", "1.6.40"},
	{"watch" + strings.Repeat(" fetchers", 22) + " noreply", "OK\r\n", ""},
}

func TestWatchLongLines(t *testing.T) {
	env := newWatchEnv(t)
	for _, tc := range watchLongLines {
		s := NewSession(env)
		s.SetWakeup(func() {})
		if got := drive(t, s, []byte(tc.line+"\r\n")).out; got != tc.want {
			t.Errorf("%d tokens: %q, want %q", len(strings.Fields(tc.line)), got, tc.want)
		}
		s.Reset()
	}
}

func TestWatchLongLinesAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, tc := range watchLongLines {
		if tc.since != "" {
			continue
		}
		if got := exchange(t, addr, tc.line+"\r\nversion\r\n", max(len(tc.want), 4)).out; !strings.HasPrefix(got, tc.want) || strings.HasPrefix(got, "VERSION") != (tc.want == "") {
			t.Errorf("%d tokens: memcached answered %q, want %q", len(strings.Fields(tc.line)), got, tc.want)
		}
	}
}
