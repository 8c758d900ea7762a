package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// memcachedToolScript is where Debian's memcached package installs
// memcached-tool (a perl script, not on PATH).
const memcachedToolScript = "/usr/share/memcached/scripts/memcached-tool"

// toolTimeout bounds every run of memcached-tool and memcdump: on a server
// that does not answer as memcached does they wait for ever.
const toolTimeout = 10 * time.Second

// toolItem is one item of the data set the tools list and dump.
type toolItem struct {
	key     string
	flags   int
	ttl     int // relative exptime; 0 never expires
	value   string
	fetched bool // read once before the tools run: metadump shows fetch=yes
}

// toolItems spans several size classes, flags, expiring and immortal items,
// and keys that metadump must URI-encode (":", "/", "%").
func toolItems() []toolItem {
	items := []toolItem{
		{key: "tool:small", flags: 5, value: "bar", fetched: true},
		{key: "tool/slash%pct", flags: 1, ttl: 1000, value: "x"},
		{key: "tool:large", flags: 7, value: strings.Repeat("L", 100000)},
	}
	for i := range 10 {
		items = append(items, toolItem{key: fmt.Sprintf("tool:mid:%d", i), flags: i, value: strings.Repeat("m", 300), fetched: i == 0})
	}
	for i := range 4 {
		items = append(items, toolItem{key: fmt.Sprintf("tool:big:%d", i), ttl: 3600, value: strings.Repeat("b", 2000)})
	}
	return items
}

// toolRun is one run of a tool: its output streams and how it ended.
type toolRun struct {
	stdout, stderr string
	err            error // exit status, or the timeout
}

// runBounded runs a command with toolTimeout; a timed-out run is killed (by
// its pid, through the context) and reported as an error.
func runBounded(name string, args ...string) toolRun {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := testproc.CommandContext(ctx, name, args...)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v (killed)", toolTimeout)
	}
	return toolRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

func (r toolRun) String() string {
	out := r.stdout
	if len(out) > 3000 {
		out = fmt.Sprintf("%s\n...(%d bytes in all)", out[:3000], len(out))
	}
	return fmt.Sprintf("err: %v\nstdout:\n%s\nstderr:\n%s", r.err, out, r.stderr)
}

// toolMode is one memcached-tool or memcdump invocation and its checks:
// check asserts the shape memcached shows (from the data set alone);
// normalise maps an output to what must equal memcached's, "" to skip.
type toolMode struct {
	name      string
	run       func(env *toolEnv) toolRun
	check     func(t *testing.T, env *toolEnv, r toolRun)
	normalise func(env *toolEnv, r toolRun) string
	probe     string // a request the tool sends, shown with its reply on failure
}

// toolEnv is what the checks know about the server the tools ran against.
type toolEnv struct {
	addr, port string
	pid        int
	items      []toolItem
	loaded     time.Time // before the data set was stored
}

func memcachedToolMode(mode string, args ...string) func(env *toolEnv) toolRun {
	return func(env *toolEnv) toolRun {
		return runBounded("perl", append([]string{memcachedToolScript, env.addr, mode}, args...)...)
	}
}

// TestMemcachedTool runs Debian's memcached-tool in every mode (display,
// also as the default, stats, settings, sizes, dump, keys, dump and keys
// with a limit) against memcached and every engine, on one data set. Each
// mode's output must have memcached's shape on its own (columns, the data
// set's keys, flags, values and expiry, counters the data set fixes), and,
// after normalising what legitimately differs (times, CAS, pids, versions,
// thread counts, item sizes), equal memcached's.
func TestMemcachedTool(t *testing.T) {
	requireTool(t, "perl")
	if _, err := os.Stat(memcachedToolScript); err != nil {
		missing(t, "%s not installed (Debian package: memcached)", memcachedToolScript)
	}
	compareToolModes(t, memcachedToolModes())
}

// compareToolModes runs the modes against memcached, then against every
// engine, comparing each normalised output with memcached's.
func compareToolModes(t *testing.T, modes []toolMode) {
	var ref map[string]string // memcached's normalised outputs by mode
	runTargets(t, []target{referenceTarget}, func(t *testing.T, tg target) {
		ref = runToolModes(t, tg, modes, nil)
	})
	forEachEngine(t, func(t *testing.T, tg target) {
		t.Parallel()
		if ref == nil {
			t.Log("no memcached reference run: checking shapes only")
		}
		runToolModes(t, tg, modes, ref)
	})
}

// runToolModes loads the data set into a fresh server of tg, runs every
// mode as a subtest and returns the normalised outputs. With ref, each must
// equal memcached's.
func runToolModes(t *testing.T, tg target, modes []toolMode, ref map[string]string) map[string]string {
	srv := startServer(t, tg)
	env := &toolEnv{addr: srv.Addr(), port: strconv.Itoa(srv.Port()), pid: srv.Pid(), items: toolItems(), loaded: time.Now()}
	c := dialRaw(t, srv.Addr())
	for _, it := range env.items {
		c.expect(fmt.Sprintf("set %s %d %d %d\r\n%s\r\n", it.key, it.flags, it.ttl, len(it.value), it.value), "STORED\r\n")
	}
	for _, it := range env.items {
		if it.fetched {
			c.expect("get "+it.key+"\r\n", fmt.Sprintf("VALUE %s %d %d\r\n", it.key, it.flags, len(it.value)), it.value+"\r\n", "END\r\n")
		}
	}
	out := map[string]string{}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := m.run(env)
			defer func() {
				if t.Failed() {
					t.Logf("%s %s output:\n%s", tg.name, m.name, r)
					if m.probe != "" {
						t.Logf("the server answers %q with: %q", m.probe, probeReply(env.addr, m.probe))
					}
				}
			}()
			if r.err != nil {
				t.Fatalf("%s: %v", m.name, r.err)
			}
			m.check(t, env, r)
			if m.normalise == nil {
				return
			}
			out[m.name] = m.normalise(env, r)
			if want, ok := ref[m.name]; ok && out[m.name] != want {
				got := strings.Split(out[m.name], "\n")
				ref := strings.Split(want, "\n")
				t.Errorf("normalised output differs from memcached's:\nonly memcached: %q\nonly %s: %q",
					minus(ref, got), tg.name, minus(got, ref))
			}
		})
	}
	// The tools (dump and keys with a limit hang up mid-dump) must leave
	// the server serving.
	c.expect("get tool:small\r\n", "VALUE tool:small 5 3\r\n", "bar\r\n", "END\r\n")
	return out
}

// metadumpAll is what memcached-tool's dump and keys modes send.
const metadumpAll = "lru_crawler metadump all\r\n"

// probeReply sends req on a fresh connection and returns what arrives
// within 2 s (at most 4 KiB), for the log of a failed mode.
func probeReply(addr, req string) string {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		return err.Error()
	}
	b, err := io.ReadAll(io.LimitReader(conn, 4096))
	if err != nil && len(b) == 0 {
		return err.Error()
	}
	return string(b)
}

func memcachedToolModes() []toolMode {
	return []toolMode{
		{name: "display", run: memcachedToolMode("display"), check: checkDisplay, normalise: normaliseDisplay},
		{name: "default", run: func(env *toolEnv) toolRun { // no mode: display
			return runBounded("perl", memcachedToolScript, env.addr)
		}, check: checkDisplay, normalise: normaliseDisplay},
		{name: "stats", run: memcachedToolMode("stats"), check: checkToolStats, normalise: normaliseToolStats},
		{name: "settings", run: memcachedToolMode("settings"), check: checkToolSettings, normalise: normaliseToolSettings},
		{name: "sizes", run: memcachedToolMode("sizes"), check: checkSizes, normalise: func(env *toolEnv, r toolRun) string {
			return strings.ReplaceAll(r.stdout, ":"+env.port+" ", ":PORT ")
		}},
		{name: "keys", run: memcachedToolMode("keys"), check: checkKeys(0), normalise: normaliseKeys, probe: metadumpAll},
		{name: "keys_limit", run: memcachedToolMode("keys", "2"), check: checkKeys(2), probe: metadumpAll},
		{name: "dump", run: memcachedToolMode("dump"), check: checkDump(0), normalise: normaliseDump, probe: metadumpAll},
		{name: "dump_limit", run: memcachedToolMode("dump", "2"), check: checkDump(2), probe: metadumpAll},
	}
}

var (
	displayHeader = "  #  Item_Size  Max_age   Pages   Count   Full?  Evicted Evict_Time OOM"
	displayRow    = regexp.MustCompile(`^\s*(\d+)\s+(\d+B|\d+\.\dK)\s+(\d+)s\s+(\d+)\s+(\d+)\s+(yes|no)\s+(\d+)\s+(\d+)\s+(\d+)$`)
	toolHeader    = regexp.MustCompile(`^#127\.0\.0\.1:(\d+)\s+(Field|Size)\s+(Value|Count)$`)
)

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// checkDisplay: the column header, then one row per size class in use whose
// counts add up to the data set.
func checkDisplay(t *testing.T, env *toolEnv, r toolRun) {
	ls := lines(r.stdout)
	if len(ls) == 0 || ls[0] != displayHeader {
		t.Fatalf("display: header %q, want %q", ls, displayHeader)
	}
	total := 0
	for _, l := range ls[1:] {
		m := displayRow.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("display: row %q does not have the 9 columns", l)
		}
		n, _ := strconv.Atoi(m[5])
		total += n
	}
	if total != len(env.items) || len(ls) < 4 {
		t.Errorf("display: %d items in %d classes, want %d items in at least 3", total, len(ls)-1, len(env.items))
	}
}

// normaliseDisplay keeps the class, chunk size, pages, count, fullness,
// evictions and OOM of each row; the ages are times.
func normaliseDisplay(_ *toolEnv, r toolRun) string {
	var b strings.Builder
	for _, l := range lines(r.stdout) {
		if m := displayRow.FindStringSubmatch(l); m != nil {
			fmt.Fprintf(&b, "class %s size %s pages %s count %s full %s evicted %s oom %s\n", m[1], m[2], m[4], m[5], m[6], m[7], m[9])
		} else {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// parseToolStats reads the "#addr Field Value" header and the name/value
// rows of the stats, settings and sizes modes.
func parseToolStats(t *testing.T, env *toolEnv, r toolRun) (names []string, vals map[string]string) {
	t.Helper()
	ls := lines(r.stdout)
	if len(ls) == 0 {
		t.Fatal("no output")
	}
	if m := toolHeader.FindStringSubmatch(ls[0]); m == nil || m[1] != env.port {
		t.Fatalf("header %q, want #127.0.0.1:%s Field Value", ls[0], env.port)
	}
	vals = map[string]string{}
	for _, l := range ls[1:] {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("row %q is not a name and a value", l)
		}
		names = append(names, f[0])
		vals[f[0]] = f[1]
	}
	if !slices.IsSorted(names) {
		t.Errorf("rows are not sorted by name: %v", names)
	}
	return names, vals
}

// stats values the data set fixes (the tools ran nothing else before).
func checkToolStats(t *testing.T, env *toolEnv, r toolRun) {
	_, v := parseToolStats(t, env, r)
	fetched := 0
	for _, it := range env.items {
		if it.fetched {
			fetched++
		}
	}
	want := map[string]string{
		"curr_items": strconv.Itoa(len(env.items)), "total_items": strconv.Itoa(len(env.items)),
		"cmd_set": strconv.Itoa(len(env.items)), "get_hits": strconv.Itoa(fetched), "get_misses": "0", "cmd_get": strconv.Itoa(fetched),
		"pid": strconv.Itoa(env.pid), "limit_maxbytes": "67108864", "max_connections": "1024",
		"evictions": "0", "accepting_conns": "1",
	}
	for name, w := range want {
		if v[name] != w {
			t.Errorf("stats %s = %q, want %q", name, v[name], w)
		}
	}
	if !strings.HasPrefix(v["version"], "1.") {
		t.Errorf("stats version %q is not a memcached version", v["version"])
	}
}

// statsVolatile are stats whose values depend on time, the process, the
// machine or the implementation's memory layout: their names must match,
// and numbers must stay numbers, but not their values.
var statsVolatile = setOf("pid", "uptime", "time", "rusage_user", "rusage_system", "version", "libevent",
	"threads", "bytes", "bytes_read", "bytes_written", "hash_bytes", "hash_power_level",
	"connection_structures", "total_connections", "curr_connections", "reserved_fds",
	"read_buf_bytes", "read_buf_bytes_free", "read_buf_count", "response_obj_bytes", "response_obj_count",
	"lru_crawler_starts", "lru_maintainer_juggles", "moves_to_cold", "moves_to_warm", "moves_within_lru",
	"slab_global_page_pool", "log_worker_written", "log_watcher_sent", "crawler_items_checked",
	// memcached's LRU maintainer counts an item it found referenced at a
	// tail: 0 or 1 here depending on when its thread ran (CI saw a 1).
	"lrutail_reflocked")

// normaliseToolStats keeps every name, the value of deterministic stats,
// and the kind (integer, decimal, text) of volatile ones.
func normaliseToolStats(env *toolEnv, r toolRun) string {
	return normaliseRows(r, func(name, v string) string {
		if !statsVolatile[name] {
			return v
		}
		return valueKind(v)
	})
}

func valueKind(v string) string {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return "<int>"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return "<decimal>"
	}
	return "<text>"
}

// normaliseRows drops the header (the port) and maps each row's value.
func normaliseRows(r toolRun, value func(name, v string) string) string {
	var b strings.Builder
	for _, l := range lines(r.stdout)[1:] {
		if f := strings.Fields(l); len(f) == 2 {
			fmt.Fprintf(&b, "%s %s\n", f[0], value(f[0], f[1]))
		} else {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func checkToolSettings(t *testing.T, env *toolEnv, r toolRun) {
	_, v := parseToolStats(t, env, r)
	want := map[string]string{"tcpport": env.port, "udpport": "0", "maxbytes": "67108864", "maxconns": "1024",
		"item_size_max": "1048576", "inter": "127.0.0.1", "evictions": "on", "cas_enabled": "yes"}
	for name, w := range want {
		if v[name] != w {
			t.Errorf("settings %s = %q, want %q", name, v[name], w)
		}
	}
}

// settingsDiffer are settings that legitimately differ: the port, thread
// counts (the machine), and memcached internals gocached does not have (LRU
// maintainer, segmented LRU, slab rebalancing).
var settingsDiffer = setOf("tcpport", "num_threads", "num_threads_per_udp",
	"lru_maintainer_thread", "slab_automove", "slab_reassign")

func normaliseToolSettings(env *toolEnv, r toolRun) string {
	return normaliseRows(r, func(name, v string) string {
		if settingsDiffer[name] {
			return valueKind(v)
		}
		return v
	})
}

func checkSizes(t *testing.T, env *toolEnv, r toolRun) {
	_, v := parseToolStats(t, env, r)
	if v["sizes_status"] != "disabled" {
		t.Errorf("sizes: %v, want sizes_status disabled (memcached without -o track_sizes)", v)
	}
}
