//go:build linux

package scenario

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
	"github.com/gocached/gocached/kernel/testbed"
)

// TestQuickOnTestbed runs a cut-down --quick matrix end to end: testbed,
// both servers, a fixed load and MAX, the memcached deferX knob path, and
// every output file.
func TestQuickOnTestbed(t *testing.T) {
	if err := testbed.Available(); err != nil {
		if os.Getenv(testbed.RequireEnv) == "1" {
			t.Fatalf("%v; %s=1 requires the testbed", err, testbed.RequireEnv)
		}
		t.Skipf("skipping: %v; set %s=1 to fail instead", err, testbed.RequireEnv)
	}
	if _, err := os.Stat(QuickOptions().MemcachedBin); err != nil {
		if os.Getenv(testbed.RequireEnv) == "1" {
			t.Fatalf("memcached required: %v", err)
		}
		t.Skipf("no memcached: %v", err)
	}
	o := QuickOptions()
	prebuilt(t, &o)
	o.OutDir = t.TempDir()
	o.Scenarios = []string{"base", "defer20", "suspend20"}
	o.Loads = mustLoads("3000,MAX")
	o.Time, o.Warmup = time.Second, 300*time.Millisecond
	o.Records = 2000
	o.Log = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	recs, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]Record{}
	for _, r := range recs {
		if r.Error != "" {
			t.Errorf("%s %s %s: %s", r.Server, r.Scenario, r.Load, r.Error)
		}
		if r.Result != nil {
			measured[r.Server+" "+r.Scenario+" "+r.Load] = r
		}
	}
	for _, k := range []string{"gocached base 3000", "gocached base MAX", "memcached base 3000", "memcached base MAX",
		"memcached defer20 3000"} {
		r, ok := measured[k]
		if !ok {
			t.Errorf("no measurement for %s", k)
			continue
		}
		res := r.Result
		// When other processes hold the CPUs (the run is then marked
		// disturbed) the load generator falls behind: a request may be
		// left unanswered at the end, and the counters, sampled over a
		// window inside the run, may see almost none of its queries
		// (seen: a second of queued requests answered after the window,
		// 0 NET_RX softirqs and 0.4 % server CPU in it). An error reply
		// or a miss is wrong however busy the machine is.
		quiet := r.Disturbed == ""
		unanswered := res.Unanswered != 0 && quiet
		unmeasured := quiet && (r.Usage.ServerCPUPct <= 0 || r.CPUNsPerQuery <= 0 || r.NetRxPerQuery <= 0)
		if res.QPS <= 0 || res.ErrReplies != 0 || unanswered || res.Misses != 0 || unmeasured {
			t.Errorf("%s: qps %.0f error replies %d unanswered %d misses %d cpu %.1f%% cpu-ns/q %.0f netrx/q %.2f (disturbed: %q)",
				k, res.QPS, res.ErrReplies, res.Unanswered, res.Misses, r.Usage.ServerCPUPct, r.CPUNsPerQuery, r.NetRxPerQuery, r.Disturbed)
		}
		if r.CyclesPerQuery == nil && HWCountersAvailable() == nil {
			t.Errorf("%s: hardware counters exist but cycles per query are missing", k)
		}
	}
	// fb_ia arrivals over 1 s: the offered count itself varies (CV 1.2, so
	// about ±2% per standard deviation); what was offered must be answered
	// unless other processes took the CPUs the client and server needed
	// (a disturbed run: on a shared machine the open loop falls behind).
	if r := measured["memcached base 3000"]; r.Result != nil {
		res := r.Result
		if math.Abs(res.OfferedQPS-3000) > 0.15*3000 {
			t.Errorf("memcached at 3000: offered %.0f", res.OfferedQPS)
		}
		if math.Abs(res.QPS-res.OfferedQPS) > 0.01*res.OfferedQPS {
			if r.Disturbed == "" {
				t.Errorf("memcached at 3000: offered %.0f, achieved %.0f", res.OfferedQPS, res.QPS)
			} else {
				t.Logf("memcached at 3000: offered %.0f, achieved %.0f in a disturbed run (%s)", res.OfferedQPS, res.QPS, r.Disturbed)
			}
		}
	}
	for _, r := range recs {
		if r.Server == Memcached && r.Scenario == "suspend20" && r.Skipped == "" {
			t.Error("memcached ran suspend20")
		}
	}
	if err := WriteAll(&o, recs, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(o.OutDir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Records []Record }
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Records) != len(recs) {
		t.Errorf("results.json: %d records, %v", len(doc.Records), err)
	}
	md, _ := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if !strings.Contains(string(md), "| base | memcached | MAX |") {
		t.Errorf("report.md:\n%s", md)
	}
	// The bed is gone afterwards.
	out, _ := os.ReadDir("/var/run/netns")
	for _, e := range out {
		if strings.HasPrefix(e.Name(), testbed.NamePrefix) && strings.Contains(e.Name(), "-"+strconv.Itoa(os.Getpid())+"-") {
			t.Errorf("namespace %s left behind", e.Name())
		}
	}
}

// TestThreadedOnTestbed runs the default (threaded) bed briefly: receive
// work must show up as NAPI kthread time and the reactor counters must come
// back from gocached. (NET_RX counts are global: other tenants' traffic
// raises them, so they cannot be asserted to be 0 here.)
func TestThreadedOnTestbed(t *testing.T) {
	if err := testbed.Available(); err != nil {
		if os.Getenv(testbed.RequireEnv) == "1" {
			t.Fatalf("%v; %s=1 requires the testbed", err, testbed.RequireEnv)
		}
		t.Skipf("skipping: %v; set %s=1 to fail instead", err, testbed.RequireEnv)
	}
	o := QuickOptions()
	prebuilt(t, &o)
	o.Threaded = true
	o.Servers, o.Scenarios = []string{Gocached}, []string{"base"}
	o.Loads = mustLoads("MAX")
	o.Time, o.Warmup = time.Second, 300*time.Millisecond
	o.Records = 2000
	o.Log = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	recs, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Result == nil {
		t.Fatalf("records %+v", recs)
	}
	r := recs[0]
	if r.Variant != "threaded-1q" || r.Usage.KthreadCPUPct <= 0 || r.Usage.Reactors["epoll_waits"] == 0 {
		t.Errorf("variant %s, kthread cpu %.1f%%, reactors %v", r.Variant, r.Usage.KthreadCPUPct, r.Usage.Reactors)
	}
}

// prebuilt gives o the test binary's one build of gocached and mcload.
func prebuilt(t *testing.T, o *Options) {
	t.Helper()
	var err error
	if o.GocachedBin, err = testproc.GocachedBinary(); err != nil {
		t.Fatal(err)
	}
	mcloadBin.once.Do(func() {
		if mcloadBin.dir, mcloadBin.err = os.MkdirTemp("", "scenario-mcload-"); mcloadBin.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		path := filepath.Join(mcloadBin.dir, "mcload")
		if mcloadBin.err = testproc.GoBuild(ctx, "github.com/gocached/gocached/bench/cmd/mcload", path); mcloadBin.err == nil {
			mcloadBin.path = path
		}
	})
	if mcloadBin.err != nil {
		t.Fatal(mcloadBin.err)
	}
	o.MCLoadBin = mcloadBin.path
}
