package mutilatecmp

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

func TestMain(m *testing.M) { testproc.VerifyMain(m) }

// report is mutilate d65c6ef's standard output after an open-loop run with
// --save, as printed against memcached 1.6.45 on loopback.
const report = `#type       avg     std     min     5th    10th    90th    95th    99th
read      124.6   366.4    19.2    30.3    32.3   240.7   318.9  1217.2
update    130.1   301.0    21.7    31.1    33.0   250.2   330.5  1100.4
op_q        1.0     0.0     1.0     1.0     1.0     1.1     1.1     1.1

Total QPS = 29896.3 (89689 / 3.0s)

Misses = 12 (0.0%)
Skipped TXs = 3 (0.0%)

RX   21432134 bytes :    6.8 MB/s
TX    3312112 bytes :    1.1 MB/s
Saving latency samples to /tmp/x.samples.
`

func TestParseReport(t *testing.T) {
	got, err := ParseReport(report)
	if err != nil {
		t.Fatal(err)
	}
	want := Report{QPS: 29896.3, Requests: 89689, ReadAvgUs: 124.6, ReadP99Us: 1217.2, Misses: 12, Skipped: 3}
	if got != want {
		t.Errorf("ParseReport = %+v, want %+v", got, want)
	}
}

func TestParseReportRejectsPartialOutput(t *testing.T) {
	for name, out := range map[string]string{
		"empty":      "",
		"no qps":     strings.Replace(report, "Total QPS", "Total", 1),
		"no read":    strings.Replace(report, "read ", "get ", 1),
		"no misses":  strings.Replace(report, "Misses", "Lost", 1),
		"short read": strings.Replace(report, "  1217.2", "", 1),
	} {
		if _, err := ParseReport(out); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseSamplesAndPercentiles(t *testing.T) {
	var b strings.Builder
	// 1000 gets with latencies 1000, 999, ..., 1 µs.
	for i := 1000; i >= 1; i-- {
		fmt.Fprintf(&b, "%f %f\n", 0.018514+float64(1000-i)/1e4, float64(i))
	}
	lat, err := ParseSamples(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 1000 || !slices.IsSorted(lat) {
		t.Fatalf("%d samples, sorted %v", len(lat), slices.IsSorted(lat))
	}
	for _, c := range []struct{ p, want float64 }{{50, 500}, {99, 990}, {99.9, 999}, {100, 1000}, {0.01, 1}} {
		if got := Percentile(lat, c.p); got != c.want {
			t.Errorf("p%g = %g, want %g", c.p, got, c.want)
		}
	}
	if Percentile(nil, 99) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

func TestParseSamplesRejectsBadLines(t *testing.T) {
	for _, in := range []string{"1.0\n", "1.0 2.0 3.0\n", "1.0 abc\n", "1.0 -5\n", "1.0 NaN\n"} {
		if _, err := ParseSamples(strings.NewReader(in)); err == nil {
			t.Errorf("%q: accepted", in)
		}
	}
	lat, err := ParseSamples(strings.NewReader("\n0.5 12.5\n\n"))
	if err != nil || !slices.Equal(lat, []float64{12.5}) {
		t.Errorf("blank lines: %v, %v", lat, err)
	}
}

func TestParseLoadsAndTargetQPS(t *testing.T) {
	got, err := ParseLoads("25, 50%,75")
	if err != nil || !slices.Equal(got, []float64{0.25, 0.5, 0.75}) {
		t.Errorf("ParseLoads = %v, %v", got, err)
	}
	for _, bad := range []string{"", ",", "0", "101", "-5", "x", "NaN"} {
		if _, err := ParseLoads(bad); err == nil {
			t.Errorf("ParseLoads(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		peak, load float64
		want       int
	}{{50630, 0.25, 12658}, {50630, 0.75, 37973}, {2, 0.1, 1}} {
		if got := TargetQPS(c.peak, c.load); got != c.want {
			t.Errorf("TargetQPS(%g, %g) = %d, want %d", c.peak, c.load, got, c.want)
		}
	}
	if LoadName(0.25) != "25 %" || LoadName(0.125) != "12.5 %" {
		t.Errorf("LoadName: %q %q", LoadName(0.25), LoadName(0.125))
	}
}

func TestArgs(t *testing.T) {
	o := DefaultOptions()
	closed := strings.Join(o.Args(0, ""), " ")
	if !strings.Contains(closed, "-q 0") || strings.Contains(closed, "-i ") || strings.Contains(closed, "--save") {
		t.Errorf("closed loop: %s", closed)
	}
	open := strings.Join(o.Args(12658, "/tmp/s"), " ")
	for _, want := range []string{"--noload", "-q 12658", "-i fb_ia", "--save /tmp/s", "-c 8 -d 1", "-T 1", "-t 5 -w 1"} {
		if !strings.Contains(open, want) {
			t.Errorf("open loop %q lacks %q", open, want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := DefaultOptions()
	ok.MemcachedBin = "memcached"
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, mutate := range map[string]func(*Options){
		"bad target":       func(o *Options) { o.Targets = []string{"redis"} },
		"no peak source":   func(o *Options) { o.MemcachedBin = "" },
		"same cpus":        func(o *Options) { o.ClientCPU = o.ServerCPU },
		"bare iadist":      func(o *Options) { o.IADist = "exponential" },
		"no loads":         func(o *Options) { o.Loads = nil },
		"zero rounds":      func(o *Options) { o.Rounds = 0 },
		"unbounded time":   func(o *Options) { o.Time = 3600 },
		"unbounded rounds": func(o *Options) { o.Rounds = 1000 },
	} {
		o := ok
		mutate(&o)
		if o.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	given := ok
	given.MemcachedBin, given.Peak, given.Targets = "", 40000, []string{Epoll}
	if err := given.Validate(); err != nil {
		t.Errorf("a given peak without memcached: %v", err)
	}
	expo := ok
	expo.IADist = "exponential:1"
	if err := expo.Validate(); err != nil {
		t.Errorf("exponential:1: %v", err)
	}
}

func rec(target string, load float64, round int, p99 float64) Record {
	return Record{Target: target, Load: load, Round: round, TargetQPS: int(1000 * load),
		Report: Report{QPS: 1000 * load}, P50Us: p99 / 10, P99Us: p99, StealPct: float64(round)}
}

func TestSummarizeAndCompare(t *testing.T) {
	failed := rec(Epoll, 0.5, 3, 1)
	failed.Error = "mutilate: exit status 139"
	recs := []Record{
		rec(Epoll, 0.25, 1, 100), rec(Memcached, 0.25, 1, 200),
		rec(Epoll, 0.5, 1, 300), rec(Memcached, 0.5, 1, 250),
		rec(Memcached, 0.25, 2, 150), rec(Epoll, 0.25, 2, 160),
		rec(Memcached, 0.5, 2, 400), rec(Epoll, 0.5, 2, 350),
		rec(Epoll, 0.25, 3, 120), rec(Memcached, 0.25, 3, 100),
		failed, rec(Memcached, 0.5, 3, 500),
	}
	sums := Summarize(recs)
	if len(sums) != 4 {
		t.Fatalf("summaries %+v", sums)
	}
	order := []string{sums[0].Target, sums[1].Target, sums[2].Target, sums[3].Target}
	if !slices.Equal(order, []string{Epoll, Memcached, Epoll, Memcached}) || sums[0].Load != 0.25 || sums[2].Load != 0.5 {
		t.Errorf("order %v", order)
	}
	e25, e50 := sums[0], sums[2]
	if e25.Runs != 3 || e25.P99Us != 120 || e25.P99MinUs != 100 || e25.P99MaxUs != 160 || e25.P50Us != 12 || e25.StealMaxPct != 3 || e25.TargetQPS != 250 {
		t.Errorf("epoll at 25 %%: %+v", e25)
	}
	if e50.Runs != 2 || e50.P99Us != 325 {
		t.Errorf("epoll at 50 %% (a failed run left out): %+v", e50)
	}
	vs := Compare(recs, sums)
	if len(vs) != 2 {
		t.Fatalf("versus %+v", vs)
	}
	if v := vs[0]; v.Load != 0.25 || math.Abs(v.P99Ratio-120.0/150) > 1e-9 || v.Below != 1 || v.Paired != 3 {
		t.Errorf("25 %%: %+v", v)
	}
	if v := vs[1]; v.Load != 0.5 || math.Abs(v.P99Ratio-325.0/400) > 1e-9 || v.Below != 1 || v.Paired != 2 {
		t.Errorf("50 %%: %+v", v)
	}
}

func TestPeakSettle(t *testing.T) {
	bad := Record{Target: Memcached, Error: "start"}
	p := Peak{Runs: []Record{
		{Report: Report{QPS: 51000}, ServerCPUPct: 76},
		bad,
		{Report: Report{QPS: 50000}, ServerCPUPct: 73},
		{Report: Report{QPS: 50600}, ServerCPUPct: 75},
	}}
	if err := p.settle(); err != nil || p.QPS != 50600 || p.ServerCPUPct != 75 || p.Used != 3 {
		t.Errorf("settle: %+v, %v", p, err)
	}
	if err := (&Peak{Runs: []Record{bad}}).settle(); err == nil {
		t.Error("a peak from failed runs only was accepted")
	}
	// A disturbed closed loop understates the peak: no peak from those.
	noisy := Record{Report: Report{QPS: 15000}, Disturbed: "other processes 50 %"}
	if err := (&Peak{Runs: []Record{noisy, bad}}).settle(); err == nil {
		t.Error("a peak from disturbed runs only was accepted")
	}
}

func TestDisturbed(t *testing.T) {
	o := DefaultOptions()
	clean := Record{TargetQPS: 10000, Report: Report{QPS: 9990}, StealPct: 1, OtherCPUPct: 3}
	if why := o.disturbed(clean); why != "" {
		t.Errorf("clean run flagged: %s", why)
	}
	peak := Record{Report: Report{QPS: 50000}} // closed loop: no rate asked for
	if why := o.disturbed(peak); why != "" {
		t.Errorf("closed-loop run flagged: %s", why)
	}
	for name, mutate := range map[string]func(*Record){
		"steal":  func(r *Record) { r.StealPct = 7 },
		"other":  func(r *Record) { r.OtherCPUPct = 30 },
		"served": func(r *Record) { r.Report.QPS = 9000 },
	} {
		r := clean
		mutate(&r)
		if o.disturbed(r) == "" {
			t.Errorf("%s: not flagged", name)
		}
	}
}

func TestUsageSeparatesOtherProcesses(t *testing.T) {
	a := usageSample{runNs: 1e9, ticks: 100}
	b := a
	b.at = a.at.Add(2 * time.Second)
	b.runNs += 1e9     // the server ran half of the 2 s
	b.ticks += 100     // 1 s of its ticks
	b.sys.User = 200   // 2 s of process time on the machine
	b.sys.System = 100 // and 1 s more
	b.sys.Idle = 100   // of 4 s (2 CPUs x 2 s)
	var r Record
	r.usage(a, b, 500*time.Millisecond) // mutilate: 0.5 s = 50 ticks
	if r.ServerCPUPct != 50 || r.ClientCPUPct != 25 {
		t.Errorf("server %g %%, client %g %%", r.ServerCPUPct, r.ClientCPUPct)
	}
	// 300 process ticks less 100 (server) and 50 (mutilate), of 400.
	if math.Abs(r.OtherCPUPct-37.5) > 1e-9 || r.StealPct != 0 {
		t.Errorf("other %g %%, steal %g %%", r.OtherCPUPct, r.StealPct)
	}
}

func TestDisturbedRunsLeaveTheMedians(t *testing.T) {
	noisy := func(r Record) Record { r.Disturbed = "other processes 40 %"; return r }
	recs := []Record{
		rec(Epoll, 0.5, 1, 100), rec(Memcached, 0.5, 1, 200),
		noisy(rec(Epoll, 0.5, 2, 9000)), rec(Memcached, 0.5, 2, 150),
		rec(Epoll, 0.5, 3, 300), rec(Memcached, 0.5, 3, 250),
		noisy(rec(Uring, 0.5, 1, 5000)), noisy(rec(Uring, 0.5, 2, 7000)),
	}
	sums := Summarize(recs)
	e, m, u := sums[0], sums[1], sums[2]
	if e.Runs != 2 || e.Excluded != 1 || e.AllDisturbed || e.P99Us != 200 || e.P99MaxUs != 300 {
		t.Errorf("epoll %+v", e)
	}
	if m.Runs != 3 || m.Excluded != 0 || m.P99Us != 200 {
		t.Errorf("memcached %+v", m)
	}
	if u.Runs != 2 || !u.AllDisturbed || u.P99Us != 6000 {
		t.Errorf("uring, every run disturbed: %+v", u)
	}
	vs := Compare(recs, sums)
	if len(vs) != 2 || vs[0].Below != 1 || vs[0].Paired != 2 {
		t.Errorf("epoll's clean pairs: %+v", vs)
	}
	if vs[1].Below != 0 || vs[1].Paired != 2 {
		t.Errorf("uring, no clean pair, falls back to all: %+v", vs[1])
	}
}
