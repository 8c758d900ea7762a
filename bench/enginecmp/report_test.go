package enginecmp

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gocached/gocached/bench"
)

func rec(target, shape string, qps, user, sys float64) Record {
	return Record{Target: target, Shape: shape, Result: &bench.Result{QPS: qps},
		NsPerReq: user + sys, UserNsPerReq: user, SysNsPerReq: sys}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSummarizeTakesMediansOfCleanRuns(t *testing.T) {
	failed := rec(Epoll, "8x4", 1e9, 1, 1)
	failed.Error = "mcload: boom"
	profiled := func(r Record, engine float64) Record {
		r.Profile = &Split{Kernel: 0.5, Protocol: 0.5 - engine, Engine: engine}
		return r
	}
	recs := []Record{
		profiled(rec(Epoll, "8x4", 300, 100, 900), 0.2),
		rec(Go, "8x4", 100, 400, 1100),
		failed, // must not count
		profiled(rec(Epoll, "8x4", 100, 300, 900), 0.1),
		rec(Epoll, "8x4", 200, 200, 700), // not profiled: left out of the split's medians
	}
	sums := Summarize(recs)
	if len(sums) != 2 || sums[0].Target != Epoll || sums[1].Target != Go {
		t.Fatalf("summaries %+v", sums)
	}
	e := sums[0]
	if e.Runs != 3 || e.QPS != 200 || e.QPSMin != 100 || e.QPSMax != 300 || e.UserNsPerReq != 200 || e.SysNsPerReq != 900 || e.NsPerReq != 1000 {
		t.Errorf("epoll summary %+v", e)
	}
	if e.Profile == nil || !near(e.Profile.Engine, 0.15) || !near(e.Profile.Kernel, 0.5) {
		t.Errorf("epoll profile split %+v", e.Profile)
	}
	rs := Ratios(sums)
	if len(rs) != 1 {
		t.Fatalf("ratios %+v", rs)
	}
	r := rs[0]
	if r.Against != Go || !near(r.QPS, 2) || !near(r.CPUCost, 1500.0/1000) || !near(r.Ceiling, 1500.0/(1000*0.85)) {
		t.Errorf("ratio %+v", r)
	}
}

func TestSummarizeKeepsTargetsThatOnlyFailed(t *testing.T) {
	bad := Record{Target: Memcached, Shape: "64x1", Error: "memcached exited at start"}
	sums := Summarize([]Record{bad, rec(Epoll, "64x1", 10, 1, 1)})
	if len(sums) != 2 || sums[0].Runs != 0 || sums[0].QPS != 0 {
		t.Fatalf("summaries %+v", sums)
	}
	if rs := Ratios(sums); len(rs) != 0 {
		t.Errorf("a target with no clean run got a ratio: %+v", rs)
	}
}

func TestWriteMarkdown(t *testing.T) {
	o := DefaultOptions()
	sums := Summarize([]Record{rec(Epoll, "64x1", 150, 100, 400), rec(Memcached, "64x1", 100, 200, 550)})
	var b bytes.Buffer
	if err := WriteMarkdown(&b, &o, sums); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 64x1 | epoll | 1 | 150 (150–150) |", "| 64x1 | memcached | 1.50× | 1.50× | n/a |", "| n/a | 0.0 |",
		"| 64x1 | epoll | memcached | 0.67× |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestPeerRatios(t *testing.T) {
	sums := Summarize([]Record{
		rec(Epoll, "8x4", 150, 90, 0), rec(Uring, "8x4", 150, 60, 0),
		rec(Memcached, "8x4", 100, 120, 0), rec(Memcached1618, "8x4", 100, 300, 0),
		rec(Epoll, "64x1", 150, 100, 0), // no memcached run in this shape
	})
	got := map[string]float64{}
	for _, r := range PeerRatios(sums) {
		got[r.Shape+" "+r.Target+"/"+r.Against] = r.CostOver
	}
	want := map[string]float64{
		"8x4 epoll/memcached": 0.75, "8x4 epoll/memcached-1.6.18": 0.3,
		"8x4 uring/memcached": 0.5, "8x4 uring/memcached-1.6.18": 0.2,
	}
	if len(got) != len(want) {
		t.Fatalf("ratios %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g < v-1e-9 || g > v+1e-9 {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
}
