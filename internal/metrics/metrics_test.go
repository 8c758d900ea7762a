package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fixed is a Source of fixed groups; a group it lacks is unknown.
type fixed map[string]map[string]string

func (f fixed) Stats(group string) (map[string]string, error) {
	m, ok := f[group]
	if !ok {
		return nil, ErrUnknownGroup
	}
	return m, nil
}

// testSource has a value of every kind the collector reads.
var testSource = fixed{
	"": {
		"pid": "7", "uptime": "120", "time": "1700000000", "version": "1.6.18-gocached",
		"rusage_user": "1.500000", "rusage_system": "0.250000", "curr_connections": "3",
		"total_connections": "10", "rejected_connections": "1", "cmd_get": "9", "cmd_set": "12",
		"cmd_flush": "2", "get_hits": "5", "get_misses": "4", "delete_hits": "1", "delete_misses": "0",
		"incr_hits": "2", "incr_misses": "1", "decr_hits": "0", "decr_misses": "3", "cas_hits": "2",
		"cas_misses": "1", "cas_badval": "1", "touch_hits": "0", "touch_misses": "1",
		"store_too_large": "6", "store_no_memory": "0", "bytes_read": "1000", "bytes_written": "2000",
		"limit_maxbytes": "67108864", "accepting_conns": "1", "listen_disabled_num": "0",
		"conn_yields": "4", "bytes": "4096", "curr_items": "8", "total_items": "20", "evictions": "3",
		"reclaimed": "1", "unexpected_napi_ids": "0", "round_robin_fallback": "2",
	},
	"settings": {"maxconns": "1024", "lru_crawler": "yes", "lru_maintainer_thread": "no", "hot_max_factor": "0.20"},
	"items":    {"items:1:number": "5", "items:1:age": "30", "items:1:evicted": "2", "items:1:mem_requested": "500", "items:1:hits_to_cold": "4"},
	"slabs": {"1:chunk_size": "96", "1:total_pages": "1", "1:get_hits": "4", "1:cmd_set": "10",
		"1:cas_hits": "2", "1:cas_badval": "1", "active_slabs": "1", "total_malloced": "1048576"},
	"reactors": {
		"reactor:0:napi_id": "8193", "reactor:0:cpu": "2", "reactor:0:conns": "5", "reactor:0:accepted": "9",
		"reactor:0:handoff_in": "1", "reactor:0:handoff_out": "3", "reactor:0:misrouted": "0",
		"reactor:0:epoll_waits": "100", "reactor:0:events": "150", "reactor:0:max_batch": "7",
		"reactor:0:busy_poll_usecs": "20", "reactor:0:busy_poll_budget": "64", "reactor:0:prefer_busy_poll": "1",
		"reactor:0:max_events": "64", "reactor:0:poll_mode": "suspend20", "reactor:0:defer_hard_irqs": "100",
		"reactor:0:gro_flush_timeout": "20000", "reactor:0:irq_suspend_timeout": "20000000",
		"reactor:0:future_field": "42", "reactor:1:napi_id": "0", "reactor:1:cpu": "-1", "reactor:1:conns": "2",
		"reactor:1:poll_mode": "none",
	},
}

// series renders a gathered sample as `name{l="v",...} value`.
func series(mf *dto.MetricFamily, m *dto.Metric) string {
	var labels []string
	for _, l := range m.GetLabel() {
		labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	var v float64
	switch {
	case m.Counter != nil:
		v = m.Counter.GetValue()
	case m.Gauge != nil:
		v = m.Gauge.GetValue()
	case m.Untyped != nil:
		v = m.Untyped.GetValue()
	}
	return fmt.Sprintf("%s{%s} %g", mf.GetName(), strings.Join(labels, ","), v)
}

// gather collects c through a pedantic registry, which rejects duplicate
// series and inconsistent label sets, and returns every sample by series.
func gather(t *testing.T, c prometheus.Collector) (map[string]bool, map[string]dto.MetricType) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	got, types := map[string]bool{}, map[string]dto.MetricType{}
	for _, mf := range mfs {
		types[mf.GetName()] = mf.GetType()
		for _, m := range mf.GetMetric() {
			got[series(mf, m)] = true
		}
	}
	return got, types
}

// TestNamesAndLabels checks memcached_exporter's names and label sets, and
// gocached's reactor and NAPI metrics, against a fixed Source.
func TestNamesAndLabels(t *testing.T) {
	netstat := filepath.Join(t.TempDir(), "netstat")
	if err := os.WriteFile(netstat, []byte("TcpExt: SyncookiesSent BusyPollRxPackets\nTcpExt: 0 12345\n"+
		"IpExt: InNoRoutes\nIpExt: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewCollector(testSource)
	c.netstat = netstat
	got, types := gather(t, c)
	want := []string{
		`memcached_up{} 1`,
		`memcached_version{version="1.6.18-gocached"} 1`,
		`memcached_uptime_seconds{} 120`,
		`memcached_time_seconds{} 1.7e+09`,
		`memcached_process_user_cpu_seconds_total{} 1.5`,
		`memcached_process_system_cpu_seconds_total{} 0.25`,
		`memcached_read_bytes_total{} 1000`,
		`memcached_written_bytes_total{} 2000`,
		`memcached_current_connections{} 3`,
		`memcached_max_connections{} 1024`,
		`memcached_connections_total{} 10`,
		`memcached_connections_rejected_total{} 1`,
		`memcached_connections_yielded_total{} 4`,
		`memcached_connections_listener_disabled_total{} 0`,
		`memcached_current_bytes{} 4096`,
		`memcached_limit_bytes{} 6.7108864e+07`,
		`memcached_current_items{} 8`,
		`memcached_items_total{} 20`,
		`memcached_items_evicted_total{} 3`,
		`memcached_items_reclaimed_total{} 1`,
		`memcached_item_too_large_total{} 6`,
		`memcached_item_no_memory_total{} 0`,
		`memcached_accepting_connections{} 1`,
		`memcached_round_robin_fallback_total{} 2`,
		`memcached_unexpected_napi_ids_total{} 0`,
		`memcached_commands_total{command="get",status="hit"} 5`,
		`memcached_commands_total{command="get",status="miss"} 4`,
		`memcached_commands_total{command="cas",status="badval"} 1`,
		`memcached_commands_total{command="decr",status="miss"} 3`,
		`memcached_commands_total{command="flush",status="hit"} 2`,
		`memcached_commands_total{command="set",status="hit"} 8`, // 12 sets less 4 cas
		`memcached_lru_crawler_enabled{} 1`,
		`memcached_lru_crawler_maintainer_thread{} 0`,
		`memcached_lru_crawler_hot_max_factor{} 0.2`,
		`memcached_slab_current_items{slab="1"} 5`,
		`memcached_slab_items_age_seconds{slab="1"} 30`,
		`memcached_slab_items_evicted_total{slab="1"} 2`,
		`memcached_slab_mem_requested_bytes{slab="1"} 500`,
		`memcached_slab_lru_hits_total{lru="cold",slab="1"} 4`,
		`memcached_slab_chunk_size_bytes{slab="1"} 96`,
		`memcached_slab_current_pages{slab="1"} 1`,
		`memcached_slab_commands_total{command="get",slab="1",status="hit"} 4`,
		`memcached_slab_commands_total{command="set",slab="1",status="hit"} 7`,
		`memcached_slab_commands_total{command="cas",slab="1",status="badval"} 1`,
		`memcached_malloced_bytes{} 1.048576e+06`,
		`gocached_reactor_info{cpu="2",napi_id="8193",poll_mode="suspend20",reactor="0"} 1`,
		`gocached_reactor_info{cpu="-1",napi_id="0",poll_mode="none",reactor="1"} 1`,
		`gocached_reactor_connections{reactor="0"} 5`,
		`gocached_reactor_connections{reactor="1"} 2`,
		`gocached_reactor_accepted_connections_total{reactor="0"} 9`,
		`gocached_reactor_handoffs_in_total{reactor="0"} 1`,
		`gocached_reactor_handoffs_out_total{reactor="0"} 3`,
		`gocached_reactor_misrouted_connections{reactor="0"} 0`,
		`gocached_reactor_epoll_waits_total{reactor="0"} 100`,
		`gocached_reactor_events_total{reactor="0"} 150`,
		`gocached_reactor_max_batch_events{reactor="0"} 7`,
		`gocached_reactor_busy_poll_usecs{reactor="0"} 20`,
		`gocached_reactor_busy_poll_budget_packets{reactor="0"} 64`,
		`gocached_reactor_prefer_busy_poll{reactor="0"} 1`,
		`gocached_reactor_max_events{reactor="0"} 64`,
		`gocached_reactor_future_field{reactor="0"} 42`,
		`gocached_napi_defer_hard_irqs{napi_id="8193"} 100`,
		`gocached_napi_gro_flush_timeout_nanoseconds{napi_id="8193"} 20000`,
		`gocached_napi_irq_suspend_timeout_nanoseconds{napi_id="8193"} 2e+07`,
		`gocached_napi_reactors{napi_id="8193"} 1`,
		`gocached_napi_connections{napi_id="8193"} 5`,
		`gocached_napi_connections{napi_id="0"} 2`,
		`gocached_busy_poll_rx_packets_total{} 12345`,
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing %s", w)
		}
	}
	if t.Failed() {
		var all []string
		for s := range got {
			all = append(all, s)
		}
		sort.Strings(all)
		t.Logf("collected:\n%s", strings.Join(all, "\n"))
	}
	for name, typ := range map[string]dto.MetricType{
		"memcached_commands_total": dto.MetricType_COUNTER, "memcached_current_connections": dto.MetricType_GAUGE,
		"gocached_reactor_epoll_waits_total": dto.MetricType_COUNTER, "gocached_napi_defer_hard_irqs": dto.MetricType_GAUGE,
		"gocached_reactor_future_field": dto.MetricType_UNTYPED,
	} {
		if types[name] != typ {
			t.Errorf("%s is a %v, want %v", name, types[name], typ)
		}
	}
	// Knobs of NAPI 0 (loopback) are not read, so they have no series.
	for s := range got {
		if strings.Contains(s, `napi_id="0"`) && strings.HasPrefix(s, "gocached_napi_defer") {
			t.Errorf("knob series for NAPI 0: %s", s)
		}
	}
}

// TestUp checks memcached_up: 0 when a group cannot be read, 1 when a group
// is only unknown (the portable engine has no `stats reactors`).
func TestUp(t *testing.T) {
	noReactors := fixed{"": testSource[""], "settings": testSource["settings"], "items": {}, "slabs": {}}
	if got, _ := gather(t, NewCollector(noReactors)); !got[`memcached_up{} 1`] {
		t.Error("up is not 1 without stats reactors")
	}
	broken := SourceFunc(func(string) (map[string]string, error) { return nil, errors.New("engine gone") })
	if got, _ := gather(t, NewCollector(broken)); !got[`memcached_up{} 0`] {
		t.Error("up is not 0 when stats fails")
	}
}

// TestParseStats covers the text reply parser.
func TestParseStats(t *testing.T) {
	m, err := ParseStats([]byte("STAT pid 1\r\nSTAT version 1.6.18 x\r\nEND\r\n"))
	if err != nil || m["pid"] != "1" || m["version"] != "1.6.18 x" {
		t.Errorf("got %v, %v", m, err)
	}
	if _, err := ParseStats([]byte("ERROR\r\n")); !errors.Is(err, ErrUnknownGroup) {
		t.Errorf("ERROR: %v, want ErrUnknownGroup", err)
	}
	for _, bad := range []string{"STAT a 1\r\n", "STAT a 1\r\nbogus\r\nEND\r\n", "STAT a 1"} {
		if _, err := ParseStats([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestHTTP serves the handler on a loopback port and scrapes it.
func TestHTTP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var broken atomic.Bool
	src := SourceFunc(func(group string) (map[string]string, error) {
		if broken.Load() {
			return nil, errors.New("engine gone")
		}
		return testSource.Stats(group)
	})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ServeListener(ctx, l, src) }()
	base := "http://" + l.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, ctype, body := get("/metrics")
	if code != 200 || !strings.HasPrefix(ctype, "text/plain") {
		t.Fatalf("/metrics: %d %s", code, ctype)
	}
	for _, w := range []string{
		`memcached_commands_total{command="get",status="hit"} 5`,
		`memcached_up 1`,
		`# TYPE memcached_current_connections gauge`,
		`gocached_napi_irq_suspend_timeout_nanoseconds{napi_id="8193"} 2e+07`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %q", w)
		}
	}
	if code, _, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	broken.Store(true)
	if code, _, _ := get("/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz of a failing source: %d, want 503", code)
	}
	if code, _, body := get("/metrics"); code != 200 || !strings.Contains(body, "memcached_up 0") {
		t.Errorf("/metrics of a failing source: %d, up 0 missing", code)
	}
	if code, _, _ := get("/nothing"); code != http.StatusNotFound {
		t.Errorf("/nothing: %d", code)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ServeListener did not return within 30 s after its context ended")
	}
}

// TestServeBindError checks Serve reports a bind failure.
func TestServeBindError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Serve(ctx, l.Addr().String(), testSource); err == nil {
		t.Fatal("Serve on a taken port returned nil")
	}
}
