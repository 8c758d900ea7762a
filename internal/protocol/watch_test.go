package protocol

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// watchTraffic is logged identically by memcached and gocached: an
// item_get for every lookup a command makes (a storage command's too), an
// item_store for every store.
const watchTraffic = "set wk 5 100 3\r\nabc\r\nget wk\r\nget nope\r\nadd wk 0 0 1\r\nx\r\nincr wk 1\r\ntouch wk 10\r\n" +
	"delete wk\r\ngets wk\r\nappend nope 0 0 1\r\nx\r\ncas wk 0 0 1 5\r\nx\r\nmg wk v\r\nms mk 2\r\nhi\r\nmg mk v\r\n" +
	"set a%b 0 0 1\r\nx\r\n"

// watchWant is what memcached 1.6.18 logs for watchTraffic.
var watchWant = []string{
	"type=item_get key=wk status=not_found clsid=0 size=0",
	"type=item_store key=wk status=stored cmd=set ttl=100 clsid=1 size=3",
	"type=item_get key=wk status=found clsid=1 size=3",
	"type=item_get key=nope status=not_found clsid=0 size=0",
	"type=item_get key=wk status=found clsid=1 size=3",
	"type=item_store key=wk status=not_stored cmd=add ttl=0 clsid=1 size=1",
	"type=item_get key=wk status=found clsid=1 size=3",
	"type=item_get key=wk status=found clsid=1 size=3",
	"type=item_get key=wk status=found clsid=1 size=3",
	"type=item_get key=wk status=not_found clsid=0 size=0",
	"type=item_get key=nope status=not_found clsid=0 size=0",
	"type=item_store key=nope status=not_stored cmd=append ttl=0 clsid=1 size=1",
	"type=item_get key=wk status=not_found clsid=0 size=0",
	"type=item_store key=wk status=not_found cmd=cas ttl=0 clsid=1 size=1",
	"type=item_get key=wk status=not_found clsid=0 size=0",
	"type=item_get key=mk status=not_found clsid=0 size=0",
	"type=item_store key=mk status=stored cmd=set ttl=0 clsid=1 size=2",
	"type=item_get key=mk status=found clsid=1 size=2",
	"type=item_get key=a%25b status=not_found clsid=0 size=0",
	"type=item_store key=a%25b status=stored cmd=set ttl=0 clsid=1 size=1",
}

var watchVolatile = regexp.MustCompile(`^ts=\d+\.\d+ gid=\d+ (.*) cfd=\d+ (size=\d+)$`)

// normalizeWatch drops the fields that differ between two servers.
func normalizeWatch(t *testing.T, out string, keep string) []string {
	t.Helper()
	var ls []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		m := watchVolatile.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("bad watch line %q", l)
		}
		if strings.Contains(m[1], keep) {
			ls = append(ls, m[1]+" "+m[2])
		}
	}
	return ls
}

// newWatchEnv's clock stands still: store lines show the TTL left.
func newWatchEnv(t *testing.T) *Env {
	env := newStillEnv(t)
	env.ResumesPending = true
	return env
}

func TestWatchLines(t *testing.T) {
	env := newWatchEnv(t)
	w := NewSession(env)
	var woke atomic.Int32
	w.SetWakeup(func() { woke.Add(1) })
	w.Opened(30)
	if got := drive(t, w, []byte("watch fetchers mutations\r\n")); got.out != "OK\r\n" || !w.Pending() {
		t.Fatalf("watch: %q pending %v", got.out, w.Pending())
	}
	c := NewSession(env)
	c.Opened(31)
	drive(t, c, []byte(watchTraffic))
	if woke.Load() != 1 {
		t.Fatalf("woken %d times, want once until drained", woke.Load())
	}
	_, out, _ := w.Process(nil, nil)
	got := normalizeWatch(t, string(out), "type=")
	if strings.Join(got, "\n") != strings.Join(watchWant, "\n") {
		t.Fatalf("watch lines:\n%s", strings.Join(got, "\n"))
	}
	if !strings.Contains(string(out), " cfd=31 ") {
		t.Fatalf("cfd is not the client's id: %q", out)
	}
	// Input on a watching connection is dropped, as memcached stops reading it.
	if n, out, st := w.Process([]byte("version\r\n"), nil); n != 9 || len(out) != 0 || st != NeedMore {
		t.Fatalf("input while watching: %d %q %v", n, out, st)
	}
	st := drive(t, c, []byte("stats\r\n")).out
	if !strings.Contains(st, "STAT log_watchers 1\r\n") || !strings.Contains(st, "STAT log_watcher_sent 20\r\n") {
		t.Fatalf("stats: %q", abbrev(st))
	}
	w.Reset() // the connection closed
	if st := drive(t, c, []byte("stats\r\n")).out; !strings.Contains(st, "STAT log_watchers 0\r\n") {
		t.Fatal("watcher not removed on Reset")
	}
	if env.logs.mask.Load() != 0 {
		t.Fatal("log mask still set with no watcher")
	}
}

// TestWatchBounded floods a watcher that never reads: its buffer stays
// bounded, and once the client has read what was kept the stream reports
// what was skipped, without waiting for another line.
func TestWatchBounded(t *testing.T) {
	env := newWatchEnv(t)
	w := NewSession(env)
	drive(t, w, []byte("watch fetchers\r\n"))
	c := NewSession(env)
	get := []byte("get " + strings.Repeat("k", 200) + "\r\n")
	for range 5000 {
		drive(t, c, get)
	}
	if n := len(w.stream.watch.buf); n > watcherBufSize {
		t.Fatalf("watcher buffer %d bytes", n)
	}
	skipped := env.logs.skipped.Load()
	if skipped == 0 {
		t.Fatal("nothing skipped")
	}
	var all []byte
	for {
		_, out, _ := w.Process(nil, nil)
		if len(out) == 0 {
			break
		}
		all = append(all, out...)
	}
	if want := "\nskipped=" + strconv.FormatUint(skipped, 10) + "\n"; !strings.HasSuffix(string(all), want) {
		t.Fatalf("the drained stream ends %q, want %q", all[max(0, len(all)-80):], want)
	}
	drive(t, c, get)
	_, out, _ := w.Process(nil, nil)
	if strings.HasPrefix(string(out), "skipped=") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("after the flood: %q", out)
	}
	if sent := env.logs.sent.Load(); sent+skipped != 5001 {
		t.Fatalf("sent %d + skipped %d != 5001", sent, skipped)
	}
}

func TestWatchLimitsAndRefusals(t *testing.T) {
	env := newWatchEnv(t)
	for i := range maxWatchers {
		if got := drive(t, NewSession(env), []byte("watch\r\n")).out; got != "OK\r\n" {
			t.Fatalf("watcher %d: %q", i, got)
		}
	}
	if got := drive(t, NewSession(env), []byte("watch\r\n")).out; got != "WATCHER_TOO_MANY log watcher limit reached\r\n" {
		t.Fatalf("21st watcher: %q", got)
	}
	plain := newSmallEnv(t) // an engine that cannot stream
	if got := drive(t, NewSession(plain), []byte("watch\r\n")).out; got != "WATCHER_FAILED failed to add log watcher\r\n" {
		t.Fatalf("without ResumesPending: %q", got)
	}
	if got := drive(t, NewSession(env), []byte("version\r\nwatch\r\n")).out; got != "VERSION 1.6.18\r\nERROR cannot pipeline other commands before watch\r\n" {
		t.Fatalf("pipelined: %q", got)
	}
}

// TestWatchAgainstMemcached checks watchWant against memcached.
func TestWatchAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	if got := memcachedWatchLines(t, startMemcached(t), watchTraffic, len(watchWant)); strings.Join(got, "\n") != strings.Join(watchWant, "\n") {
		t.Fatalf("memcached's watch lines:\n%s", strings.Join(got, "\n"))
	}
}

var evictionLine = regexp.MustCompile(`^ts=\d+\.\d+ gid=\d+ type=eviction key=\S+ fetch=(yes|no) ttl=-?\d+ la=\d+ clsid=\d+ size=\d+$`)

// evictionTraffic overfills a small cache with 10 KB values.
func evictionTraffic(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("set ev" + strconv.Itoa(i) + " 0 0 10000 noreply\r\n" + strings.Repeat("v", 10000) + "\r\n")
	}
	return b.String()
}

func checkEvictionLines(t *testing.T, out string, who string) int {
	t.Helper()
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" || strings.HasPrefix(l, "skipped=") {
			continue
		}
		if !evictionLine.MatchString(l) {
			t.Fatalf("%s: bad eviction line %q", who, l)
		}
		if !strings.Contains(l, " fetch=no ttl=-1 ") || !strings.HasSuffix(l, " size=10000") {
			t.Fatalf("%s: unexpected eviction line %q", who, l)
		}
		n++
	}
	return n
}

func TestWatchEvictions(t *testing.T) {
	t.Parallel()
	env := newWatchEnv(t) // 4 MiB
	w := NewSession(env)
	if got := drive(t, w, []byte("watch evictions\r\n")).out; got != "OK\r\n" {
		t.Fatalf("watch evictions: %q", got)
	}
	drive(t, NewSession(env), []byte(evictionTraffic(1000)))
	var out []byte
	for {
		_, o, _ := w.Process(nil, nil)
		if len(o) == 0 {
			break
		}
		out = append(out, o...)
	}
	evicted := env.Store.Stats().Evictions
	if n := checkEvictionLines(t, string(out), "gocached"); evicted == 0 || uint64(n) != evicted {
		t.Fatalf("%d eviction lines for %d evictions", n, evicted)
	}
}

func TestWatchEvictionsAgainstMemcached(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcachedWith(t, nil, "-m", "8")
	ref := memcachedWatch(t, addr, "evictions", evictionTraffic(2000)+"version\r\n", 1)
	if checkEvictionLines(t, ref, "memcached") == 0 {
		t.Fatalf("memcached's eviction stream: %q", abbrev(ref))
	}
}

// TestWatchLogbufSize: -o watcher_logbuf_size=8 (8 KB) bounds each
// watcher's buffer at 8192 bytes, so a few hundred lines overflow it
// (watcher.t), and stats settings reports it in bytes.
func TestWatchLogbufSize(t *testing.T) {
	env := newWatchEnv(t)
	env.Settings.WatcherLogbufSize = 8 << 10
	if st := drive(t, NewSession(env), []byte("stats settings\r\n")).out; !strings.Contains(st, "STAT watcher_logbuf_size 8192\r\n") {
		t.Fatalf("stats settings: %q", abbrev(st))
	}
	w := NewSession(env)
	drive(t, w, []byte("watch fetchers\r\n"))
	c := NewSession(env)
	get := []byte("get " + strings.Repeat("k", 100) + "\r\n")
	for range 200 { // about 200 * 170 bytes: four times the buffer
		drive(t, c, get)
	}
	if n := len(w.stream.watch.buf); n > 8<<10 {
		t.Fatalf("watcher buffer %d bytes, over 8192", n)
	}
	skipped := env.logs.skipped.Load()
	if skipped == 0 {
		t.Fatal("nothing skipped with an 8 KB buffer")
	}
	var all []byte
	for {
		_, out, _ := w.Process(nil, nil)
		if len(out) == 0 {
			break
		}
		all = append(all, out...)
	}
	if want := "\nskipped=" + strconv.FormatUint(skipped, 10) + "\n"; !strings.HasSuffix(string(all), want) {
		t.Fatalf("the drained stream ends %q, want %q", all[max(0, len(all)-80):], want)
	}
}

// TestWatchConnEvents: `watch connevents` logs conn_new and conn_close
// with memcached's fields; quit and a client close are reason=normal, a
// protocol error's close reason=error (watcher.t).
func TestWatchConnEvents(t *testing.T) {
	env := newWatchEnv(t)
	w := NewSession(env)
	if got := drive(t, w, []byte("watch connevents\r\n")).out; got != "OK\r\n" {
		t.Fatalf("watch: %q", got)
	}
	peer := netip.MustParseAddrPort("127.0.0.1:55814")
	c := NewSession(env)
	c.OpenedFrom(25, "tcp", peer)
	if _, _, st := c.Process([]byte("version\r\nquit\r\n"), nil); st != Close {
		t.Fatalf("quit: status %v", st)
	}
	c.Reset()
	c.OpenedFrom(26, "tcp", peer)
	if _, _, st := c.Process([]byte("GET / HTTP/1.1\r\n"), nil); st != Close {
		t.Fatalf("GET: status %v", st)
	}
	c.Reset()
	c.OpenedFrom(27, "local", netip.AddrPort{})
	c.Reset()
	c.Opened(28) // an engine that does not give the address
	c.Reset()
	c.OpenedFrom(29, "tcp", peer) // a watcher: memcached closes it with no reason set
	drive(t, c, []byte("watch mutations\r\n"))
	c.Reset()
	_, out, _ := w.Process(nil, nil)
	re := regexp.MustCompile(`^ts=\d+\.\d+ gid=\d+ type=(\S+) (.*)$`)
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q", l)
		}
		got = append(got, m[1]+" "+m[2])
	}
	want := []string{
		"conn_new rip=127.0.0.1 rport=55814 transport=tcp cfd=25",
		"conn_close rip=127.0.0.1 rport=55814 transport=tcp reason=normal cfd=25",
		"conn_new rip=127.0.0.1 rport=55814 transport=tcp cfd=26",
		"conn_close rip=127.0.0.1 rport=55814 transport=tcp reason=error cfd=26",
		"conn_new rip=unix rport=0 transport=local cfd=27",
		"conn_close rip=unix rport=0 transport=local reason=normal cfd=27",
		"conn_new transport=tcp cfd=28",
		"conn_close transport=tcp reason=normal cfd=28",
		"conn_new rip=127.0.0.1 rport=55814 transport=tcp cfd=29",
		"conn_close rip=127.0.0.1 rport=55814 transport=tcp reason=error cfd=29",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
