package integration

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMetricsEndpoint starts the real binary with --metrics-listen on every
// engine, drives a little traffic, and scrapes /metrics and /healthz over
// HTTP as Prometheus would: the metrics carry memcached_exporter's names
// and the traffic's counts, and the epoll engine adds its reactor and NAPI
// series.
func TestMetricsEndpoint(t *testing.T) {
	out, _ := testproc.Command(gocachedBinary(t), "-h").CombinedOutput()
	if !strings.Contains(string(out), "metrics-listen") {
		t.Fatalf("gocached -h does not list --metrics-listen:\n%s", out)
	}
	forEachEngine(t, func(t *testing.T, tg target) {
		port, err := testproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		p := startServer(t, tg, "-t", "2", "--metrics-listen", "127.0.0.1:"+strconv.Itoa(port))
		c := dialRaw(t, p.Addr())
		c.expect("set a 0 0 1\r\nx\r\n", "STORED\r\n")
		c.expect("get a\r\n", "VALUE a 0 1\r\n", "x\r\n", "END\r\n")
		c.expect("get b\r\n", "END\r\n")

		body := httpGet(t, base+"/metrics")
		want := []string{
			"memcached_up 1",
			`memcached_commands_total{command="get",status="hit"} 1`,
			`memcached_commands_total{command="get",status="miss"} 1`,
			`memcached_commands_total{command="set",status="hit"} 1`,
			"memcached_current_items 1",
			"memcached_max_connections 1024",
			"# TYPE memcached_current_connections gauge",
			"memcached_version{version=",
		}
		if tg.engine == "epoll" {
			want = append(want, `gocached_reactor_info{`, `gocached_reactor_connections{reactor="0"}`,
				`gocached_napi_connections{napi_id="0"} 1`, `gocached_reactor_epoll_waits_total{reactor="1"}`)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("/metrics lacks %q", w)
			}
		}
		if t.Failed() {
			t.Logf("/metrics:\n%s", body)
		}
		if got := httpGet(t, base+"/healthz"); got != "ok\n" {
			t.Errorf("/healthz: %q", got)
		}
	})
}

// httpGet fetches url, retrying briefly while the endpoint starts, and
// returns the body of a 200 reply.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get(url)
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d %v", url, resp.StatusCode, rerr)
			}
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
