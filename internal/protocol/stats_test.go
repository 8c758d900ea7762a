package protocol

import (
	"bufio"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/store"
	"github.com/gocached/gocached/internal/testproc"
)

// generalStatNames is memcached 1.6.45's `stats` output, in order.
var generalStatNames = strings.Fields(`pid uptime time version libevent pointer_size
rusage_user rusage_system max_connections curr_connections total_connections
rejected_connections connection_structures response_obj_oom response_obj_count
response_obj_bytes read_buf_count read_buf_bytes read_buf_bytes_free read_buf_oom
reserved_fds cmd_get cmd_set cmd_flush cmd_touch cmd_meta get_hits get_misses
get_expired get_flushed delete_misses delete_hits incr_misses incr_hits decr_misses
decr_hits cas_misses cas_hits cas_badval touch_hits touch_misses store_too_large
store_no_memory auth_cmds auth_errors bytes_read bytes_written limit_maxbytes
accepting_conns listen_disabled_num time_in_listen_disabled_us threads conn_yields
hash_power_level hash_bytes hash_is_expanding slab_reassign_rescues
slab_reassign_chunk_rescues slab_reassign_inline_reclaim slab_reassign_busy_items
slab_reassign_busy_deletes slab_reassign_busy_nomem slab_reassign_last_busy_status
slab_reassign_running slabs_moved
lru_crawler_running lru_crawler_starts lru_maintainer_juggles malloc_fails
log_worker_dropped log_worker_written log_watcher_skipped log_watcher_sent log_watchers
unexpected_napi_ids round_robin_fallback bytes curr_items total_items
slab_global_page_pool expired_unfetched evicted_unfetched evicted_active evictions
reclaimed crawler_reclaimed crawler_items_checked lrutail_reflocked moves_to_cold
moves_to_warm moves_within_lru direct_reclaims lru_bumps_dropped`)

// parseStats splits a whole stats reply, which must end in END, into
// ordered names and a name->value map (testproc's reader, which fails on
// any line that is not a STAT line).
func parseStats(t testing.TB, reply string) ([]string, map[string]string) {
	t.Helper()
	if !strings.HasSuffix(reply, "END\r\n") {
		t.Fatalf("stats reply does not end in END: %q", abbrev(reply))
	}
	names, values, err := testproc.ReadStats(bufio.NewReader(strings.NewReader(reply)))
	if err != nil {
		t.Fatalf("stats reply %q: %v", abbrev(reply), err)
	}
	return names, values
}

// fakeServer is an engine that reports fixed totals.
type fakeServer struct {
	st     ServerStats
	resets int
}

func (f *fakeServer) ServerStats() ServerStats { return f.st }
func (f *fakeServer) ResetStats()              { f.resets++ }
func (f *fakeServer) GroupStats(group string, add func(name, value string)) bool {
	switch group {
	case "conns":
		add("7:addr", "tcp:127.0.0.1:5555")
		add("7:state", "conn_parse_cmd")
		return true
	case "reactors":
		add("reactor:0:napi_id", "8193")
		return true
	}
	return false
}

func TestGeneralStats(t *testing.T) {
	env := newTestEnv(t)
	env.Settings.Version = "1.6.18-gocached"
	srv := &fakeServer{st: ServerStats{CurrConnections: 3, TotalConnections: 9, AcceptingConns: true,
		ConnYields: 4, ListenDisabledNum: 2, BytesRead: 100, BytesWritten: 200, Threads: 2,
		UnexpectedNAPIIDs: 5}}
	env.Server = srv
	// The oversized set leaves its session swallowing; stats come from another.
	drive(t, NewSession(env), []byte("set a 0 0 1\r\nx\r\nget a\r\nget b\r\nset big 0 0 2000000\r\n"))
	// memcached 1.6.45 counts store_too_large for text and meta only.
	drive(t, NewSession(env), []byte(binReq(opSet, "big", setExt(0, 0), strings.Repeat("v", 2000000), 1, 0)))
	s := NewSession(env)
	out := drive(t, s, []byte("stats\r\n")).out
	names, v := parseStats(t, out)
	if !slices.Equal(names, generalStatNames) {
		t.Fatalf("stats names differ from memcached's:\n got %v\nwant %v", names, generalStatNames)
	}
	want := map[string]string{
		"version": "1.6.18-gocached", "curr_connections": "3", "total_connections": "9",
		"accepting_conns": "1", "conn_yields": "4", "listen_disabled_num": "2", "bytes_read": "100",
		"bytes_written": "200", "threads": "2", "cmd_get": "2", "get_hits": "1", "get_misses": "1",
		"curr_items": "1", "store_too_large": "1", "max_connections": "1024",
		"limit_maxbytes": strconv.Itoa(64 << 20), "unexpected_napi_ids": "5", "pointer_size": strconv.Itoa(strconv.IntSize),
	}
	for name, w := range want {
		if v[name] != w {
			t.Errorf("%s = %q, want %q", name, v[name], w)
		}
	}
	for _, name := range []string{"rusage_user", "rusage_system"} {
		if !regexp.MustCompile(`^[0-9]+\.[0-9]{6}$`).MatchString(v[name]) {
			t.Errorf("%s = %q, want seconds.micros", name, v[name])
		}
	}

	drive(t, s, []byte("stats reset\r\n"))
	if srv.resets != 1 {
		t.Errorf("engine ResetStats called %d times", srv.resets)
	}
	_, v = parseStats(t, drive(t, s, []byte("stats\r\n")).out)
	if v["cmd_get"] != "0" || v["store_too_large"] != "0" || v["curr_items"] != "1" {
		t.Errorf("after reset: cmd_get=%s store_too_large=%s curr_items=%s", v["cmd_get"], v["store_too_large"], v["curr_items"])
	}
}

func TestStatsWithoutEngine(t *testing.T) {
	env := newTestEnv(t)
	env.Settings = nil
	s := NewSession(env)
	names, v := parseStats(t, drive(t, s, []byte("stats\r\n")).out)
	if !slices.Equal(names, generalStatNames) || v["curr_connections"] != "0" || v["accepting_conns"] != "0" {
		t.Fatalf("stats without engine/settings: %v", v)
	}
	if got := drive(t, s, []byte("stats conns\r\nstats reactors\r\nstats reset\r\n")).out; got != lines("END", "ERROR", "RESET") {
		t.Fatalf("groups without engine: %q", got)
	}
	parseStats(t, drive(t, s, []byte("stats settings\r\n")).out)
}

func TestGroupStats(t *testing.T) {
	env := newTestEnv(t)
	env.Server = &fakeServer{}
	got := runScriptEnv(t, env, "stats conns\r\nstats reactors\r\nstats nope\r\n")
	want := lines("STAT 7:addr tcp:127.0.0.1:5555", "STAT 7:state conn_parse_cmd", "END",
		"STAT reactor:0:napi_id 8193", "END", "ERROR")
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func runScriptEnv(t *testing.T, env *Env, in string) string {
	t.Helper()
	return drive(t, NewSession(env), []byte(in)).out
}

func TestSettingsStats(t *testing.T) {
	env := newTestEnv(t)
	env.Settings.Interface = "127.0.0.1"
	env.Settings.Evictions = false
	env.Settings.HashPowerInit = 20
	_, v := parseStats(t, runScriptEnv(t, env, "verbosity 2\r\nstats settings\r\n")[len("OK\r\n"):])
	want := map[string]string{"maxbytes": strconv.Itoa(64 << 20), "maxconns": "1024", "tcpport": "11211",
		"inter": "127.0.0.1", "verbosity": "2", "evictions": "off", "num_threads": "4",
		"reqs_per_event": "20", "cas_enabled": "yes", "item_size_max": "1048576", "binding_protocol": "ascii",
		"shutdown_command": "no", "tcp_backlog": "1024", "hashpower_init": "20"}
	for name, w := range want {
		if v[name] != w {
			t.Errorf("%s = %q, want %q", name, v[name], w)
		}
	}
}

func TestItemsAndSlabs(t *testing.T) {
	classes := []store.ClassStats{
		{ID: 1, ChunkSize: 96, ChunksPer: 10922, TotalPages: 1, UsedChunks: 2, FreeChunks: 10920, Items: 2, MemRequested: 130, GetHits: 3, CmdSet: 2, OldestAge: 7},
		{ID: 2, ChunkSize: 120, ChunksPer: 8738, TotalPages: 1, FreeChunks: 8738}, // pages, no items
		{ID: 3, ChunkSize: 152}, // unused
	}
	var w statWriter
	appendItems(&w, classes, false, true)
	names, v := parseStats(t, string(w.b)+"END\r\n")
	if len(names) != 28 || names[0] != "items:1:number" || names[27] != "items:1:hits_to_temp" {
		t.Fatalf("items names: %v", names)
	}
	if v["items:1:number"] != "2" || v["items:1:age"] != "7" || v["items:1:mem_requested"] != "130" {
		t.Fatalf("items values: %v", v)
	}
	// With the TEMP LRU on, memcached adds number_temp after number_cold;
	// each queue's numbers come from the store.
	classes[0].NumberTemp, classes[0].NumberCold, classes[0].HitsToCold, classes[0].HitsToTemp = 1, 1, 1, 2
	w = statWriter{}
	appendItems(&w, classes, true, true)
	names, v = parseStats(t, string(w.b)+"END\r\n")
	if len(names) != 29 || names[4] != "items:1:number_temp" || v["items:1:number_temp"] != "1" ||
		v["items:1:number_cold"] != "1" || v["items:1:hits_to_cold"] != "1" || v["items:1:hits_to_temp"] != "2" {
		t.Fatalf("items with temp_lru: %v %v", names, v)
	}
	w = statWriter{}
	appendSlabs(&w, classes, store.Stats{TotalMallocedBytes: 2 << 20})
	names, v = parseStats(t, string(w.b)+"END\r\n")
	if len(names) != 2*15+2 || names[15] != "2:chunk_size" || v["active_slabs"] != "2" ||
		v["total_malloced"] != strconv.Itoa(2<<20) || v["1:total_chunks"] != "10922" {
		t.Fatalf("slabs: %v %v", names, v)
	}
}

func TestFormatUsec(t *testing.T) {
	for us, want := range map[int64]string{0: "0.000000", 7: "0.000007", 1234567: "1.234567", 10_000_000: "10.000000"} {
		if got := formatUsec(us); got != want {
			t.Errorf("formatUsec(%d) = %q, want %q", us, got, want)
		}
	}
}

// TestStatsNamesAgainstMemcached compares field names and order of every
// stats group with a live memcached 1.6.
func TestStatsNamesAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startRefMemcached(t) // the names are 1.6.45's
	env := newTestEnv(t)
	for _, group := range []string{"", " settings", " items", " slabs"} {
		in := "set a 0 0 1\r\nx\r\nget a\r\nstats" + group + "\r\n"
		ref := exchangeAll(t, addr, in)
		got := runScriptEnv(t, env, in)
		prefix := lines("STORED", "VALUE a 0 1", "x", "END")
		refNames, _ := parseStats(t, strings.TrimPrefix(ref.out, prefix))
		if group == " items" || group == " slabs" {
			continue // the placeholder store reports no classes; layout is checked above
		}
		gotNames, _ := parseStats(t, strings.TrimPrefix(got, prefix))
		if !slices.Equal(gotNames, refNames) {
			t.Errorf("stats%s: names differ\n got %v\nwant %v", group, gotNames, refNames)
		}
	}
}

// -o no_lru_crawler / no_modern: the crawler starts off (lru-crawler.t).
func TestSettingsCrawlerDisabledAtStart(t *testing.T) {
	env := newTestEnv(t)
	env.Settings.LRUCrawlerDisabled = true
	_, v := parseStats(t, runScriptEnv(t, env, "stats settings\r\n"))
	if v["lru_crawler"] != "no" {
		t.Errorf("lru_crawler = %q, want no", v["lru_crawler"])
	}
	got := runScriptEnv(t, env, "lru_crawler metadump all\r\nlru_crawler crawl 1\r\nlru_crawler enable\r\n")
	want := "CLIENT_ERROR lru crawler disabled\r\nCLIENT_ERROR lru crawler disabled\r\nOK\r\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	_, v = parseStats(t, runScriptEnv(t, env, "stats settings\r\n"))
	if v["lru_crawler"] != "yes" {
		t.Errorf("after enable: lru_crawler = %q, want yes", v["lru_crawler"])
	}
}

// lru_maintainer_thread is yes by default, as memcached 1.6's, and no with
// -o no_lru_maintainer (which also hides lru_maintainer_juggles).
func TestSettingsLRUMaintainer(t *testing.T) {
	for _, off := range []bool{false, true} {
		env := newTestEnv(t)
		env.Settings.LRUMaintainerDisabled = off
		_, v := parseStats(t, runScriptEnv(t, env, "stats settings\r\n"))
		_, st := parseStats(t, runScriptEnv(t, env, "stats\r\n"))
		want := map[bool]string{false: "yes", true: "no"}[off]
		if v["lru_maintainer_thread"] != want {
			t.Errorf("disabled=%v: lru_maintainer_thread = %q, want %s", off, v["lru_maintainer_thread"], want)
		}
		if _, shown := st["lru_maintainer_juggles"]; shown == off {
			t.Errorf("disabled=%v: lru_maintainer_juggles shown %v", off, shown)
		}
	}
}

// -e: stats settings prints the memory file's path, (null) without (restart.t).
func TestSettingsMemoryFile(t *testing.T) {
	env := newTestEnv(t)
	_, v := parseStats(t, runScriptEnv(t, env, "stats settings\r\n"))
	if v["memory_file"] != "(null)" {
		t.Errorf("memory_file = %q, want (null)", v["memory_file"])
	}
	env = newTestEnv(t)
	env.Settings.MemoryFile = "/dev/shm/mc_restart"
	_, v = parseStats(t, runScriptEnv(t, env, "stats settings\r\n"))
	if v["memory_file"] != "/dev/shm/mc_restart" {
		t.Errorf("memory_file = %q, want /dev/shm/mc_restart", v["memory_file"])
	}
}

// stats.t starts with -o no_lru_crawler,no_lru_maintainer and counts 83
// fields: memcached leaves out the crawler's and the maintainer's counters.
func TestStatsCrawlerMaintainerOff(t *testing.T) {
	env := newTestEnv(t)
	keys, _ := parseStats(t, runScriptEnv(t, env, "stats\r\n"))
	on := len(keys)
	env = newTestEnv(t)
	env.Settings.LRUCrawlerDisabled = true
	env.Settings.LRUMaintainerDisabled = true
	keys, v := parseStats(t, runScriptEnv(t, env, "stats\r\n"))
	for _, name := range []string{"lru_crawler_running", "lru_crawler_starts", "lru_maintainer_juggles",
		"evicted_active", "moves_to_cold", "moves_to_warm", "moves_within_lru", "direct_reclaims", "lru_bumps_dropped"} {
		if _, ok := v[name]; ok {
			t.Errorf("%s shown with the crawler and maintainer off", name)
		}
	}
	if on-len(keys) != 9 {
		t.Errorf("%d fields with both on, %d off: want 9 fewer", on, len(keys))
	}
}

// A crawl holds memcached's one crawler until it is done: stats shows
// lru_crawler_running meanwhile (lru-crawler.t waits on it before it counts
// the chunks left) and a second crawl is refused.
func TestCrawlHoldsTheCrawler(t *testing.T) {
	env := newTestEnv(t)
	var crawl func()
	env.Background = func(work func()) { crawl = work }
	if got := runScriptEnv(t, env, "lru_crawler crawl all\r\nlru_crawler crawl 1\r\n"); got != "OK\r\n"+rCrawlerBusy {
		t.Fatalf("two crawls: got %q", got)
	}
	if _, v := parseStats(t, runScriptEnv(t, env, "stats\r\n")); v["lru_crawler_running"] != "1" {
		t.Fatalf("lru_crawler_running = %q during a crawl, want 1", v["lru_crawler_running"])
	}
	crawl()
	if _, v := parseStats(t, runScriptEnv(t, env, "stats\r\n")); v["lru_crawler_running"] != "0" {
		t.Fatalf("lru_crawler_running = %q after the crawl, want 0", v["lru_crawler_running"])
	}
	if got := runScriptEnv(t, env, "lru_crawler crawl 1\r\n"); got != "OK\r\n" {
		t.Fatalf("crawl after the first ended: got %q", got)
	}
}
