//go:build linux

package scenario

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/bench"
)

func TestParseLoads(t *testing.T) {
	tests := []struct {
		in   string
		want string // loads joined back
		err  bool
	}{
		{"5000,MAX", "5000,MAX", false},
		{"max, 25%,50% ,90%", "MAX,25%,50%,90%", false},
		{"1e4", "10000", false},
		{"", "", true},
		{"0", "", true},
		{"-5", "", true},
		{"150%", "", true},
		{"0%", "", true},
		{"fast", "", true},
		{"NaN", "", true},
		{"+Inf", "", true},
		{"NaN%", "", true},
	}
	for _, tt := range tests {
		got, err := ParseLoads(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ParseLoads(%q) error %v, want error %v", tt.in, err, tt.err)
			continue
		}
		var s []string
		for _, l := range got {
			s = append(s, l.String())
		}
		if j := strings.Join(s, ","); !tt.err && j != tt.want {
			t.Errorf("ParseLoads(%q) = %s, want %s", tt.in, j, tt.want)
		}
	}
}

func TestOrderLoads(t *testing.T) {
	tests := []struct{ in, want string }{
		{"5000,MAX", "5000,MAX"},
		{"50%,5000", "MAX,50%,5000"},
		{"25%,MAX,90%", "MAX,25%,90%"},
	}
	for _, tt := range tests {
		var s []string
		for _, l := range orderLoads(mustLoads(tt.in)) {
			s = append(s, l.String())
		}
		if got := strings.Join(s, ","); got != tt.want {
			t.Errorf("orderLoads(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestSupports(t *testing.T) {
	tests := []struct {
		server, scenario string
		want             bool
	}{
		{Gocached, "base", true}, {Gocached, "suspend20", true}, {Gocached, "napibusy", true},
		{Memcached, "base", true}, {Memcached, "defer200", true},
		{Memcached, "napibusy", false}, {Memcached, "fullbusy", false}, {Memcached, "suspend0", false},
		{Memcached, "suspend50", false}, {Gocached, "turbo", false},
	}
	for _, tt := range tests {
		if got, why := Supports(tt.server, tt.scenario); got != tt.want || (!got && why == "") {
			t.Errorf("Supports(%s, %s) = %v %q, want %v", tt.server, tt.scenario, got, why, tt.want)
		}
	}
	for _, sc := range AllScenarios {
		if ok, why := Supports(Gocached, sc); !ok {
			t.Errorf("gocached cannot run preset %s: %s", sc, why)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{DefaultOptions(), QuickOptions()} {
		if err := o.Validate(); err != nil {
			t.Errorf("preset options: %v", err)
		}
	}
	bad := []func(*Options){
		func(o *Options) { o.Servers = []string{"redis"} },
		func(o *Options) { o.Scenarios = []string{"suspendfast"} },
		func(o *Options) { o.Runs = 0 },
		func(o *Options) { o.Time = time.Millisecond },
		func(o *Options) { o.Loads = nil },
		func(o *Options) { o.Depth = 0 },
	}
	for i, f := range bad {
		o := QuickOptions()
		f(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("bad options %d validated", i)
		}
	}
}

func TestUsage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := counters{at: t0, serverCPU: 100, clientCPU: 50, busyPoll: 10, netRx: 1000,
		system: SystemCPU{User: 1000, System: 500, Idle: 5000, SoftIRQ: 100, Steal: 10}}
	b := counters{at: t0.Add(2 * time.Second), serverCPU: 200, clientCPU: 90, busyPoll: 20010, netRx: 5000,
		system: SystemCPU{User: 1150, System: 550, Idle: 5180, SoftIRQ: 116, Steal: 14}}
	u := usage(a, b)
	// Machine: 400 ticks in 2 s (2 CPUs). Server 100 ticks = 1 s of CPU in 2 s.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"server cpu", u.ServerCPUPct, 50},
		{"client cpu", u.ClientCPUPct, 20},
		{"steal", u.StealPct, 1},
		{"irq", u.IRQCPUPct, 4},
		{"other", u.OtherCPUPct, 100 * float64(200-100-40) / 400},
		{"busy poll/s", u.BusyPollPerSec, 10000},
		{"net rx/s", u.NetRxPerSec, 2000},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
}

func fakeRecord(server, sc, load string, offered, qps, p99, cpu float64) Record {
	return Record{Server: server, Scenario: sc, Load: load, OfferedQPS: offered, Run: 1,
		Result:        &bench.Result{QPS: qps, Requests: int64(qps), Latency: bench.Latency{Avg: p99 / 2, P95: p99 * 0.8, P99: p99}},
		Usage:         Usage{ServerCPUPct: cpu, Seconds: 1},
		CPUNsPerQuery: cpu / 100 * 1e9 / qps, NetRxPerQuery: 0.5}
}

func TestSummarize(t *testing.T) {
	recs := []Record{
		fakeRecord(Gocached, "base", "5000", 5000, 5000, 100, 20),
		fakeRecord(Gocached, "base", "5000", 5000, 4990, 300, 24),
		fakeRecord(Gocached, "base", "5000", 5000, 5010, 200, 22),
		fakeRecord(Gocached, "base", "MAX", 0, 40000, 900, 95),
		{Server: Memcached, Scenario: "suspend20", Skipped: "memcached cannot set epoll busy-poll parameters"},
	}
	recs[1].Disturbed = "steal 5%"
	sums := Summarize(recs)
	if len(sums) != 3 {
		t.Fatalf("%d summaries, want 3", len(sums))
	}
	s := sums[0]
	if s.Runs != 3 || s.Disturbed != 1 || s.QPS.Median != 5000 || s.P99 != (Stat{200, 100, 300}) || s.CPU.Median != 22 {
		t.Errorf("summary %+v", s)
	}
	if sp := s.P99.Spread(); math.Abs(sp-1) > 1e-12 {
		t.Errorf("p99 spread %g, want 1", sp)
	}
	if s.CyclesPerQuery != nil {
		t.Error("cycles per query without any counted")
	}
	if sums[2].Runs != 0 || !strings.HasPrefix(sums[2].Note, "skipped") {
		t.Errorf("skipped summary %+v", sums[2])
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median = %g", got)
	}
}

func TestWriteAll(t *testing.T) {
	o := QuickOptions()
	o.OutDir = t.TempDir()
	recs := []Record{
		fakeRecord(Memcached, "defer20", "5000", 5000, 5000, 150, 18),
		fakeRecord(Gocached, "base", "5000", 5000, 5000, 100, 20),
		fakeRecord(Gocached, "base", "MAX", 0, 40000, 900, 95),
		fakeRecord(Memcached, "base", "5000", 5000, 5000, 120, 25),
		fakeRecord(Memcached, "base", "MAX", 0, 50000, 700, 99),
		{Server: Memcached, Scenario: "suspend20", Skipped: "memcached cannot set epoll busy-poll parameters"},
	}
	if err := WriteAll(&o, recs, "n/a: no counters"); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(md)
	for _, want := range []string{"| testcase | server | load | qps | avglat | 95%lat | 99%lat | cpu |",
		"| base | gocached | 5000 | 5000 | 50 | 80 | 100 | 20% | 40000 |", "| base | memcached | MAX | 50000 |",
		"skipped: memcached cannot set", "cycles/q: n/a"} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	// base rows come before defer20 rows, and memcached sits next to gocached.
	if strings.Index(report, "| defer20 |") < strings.Index(report, "| base | memcached | MAX |") {
		t.Errorf("rows out of scenario order:\n%s", report)
	}
	if g, m := strings.Index(report, "| base | gocached | 5000 |"), strings.Index(report, "| base | memcached | 5000 |"); m < g || m > strings.Index(report, "| base | gocached | MAX |") {
		t.Errorf("memcached row not next to gocached's for the same load:\n%s", report)
	}
	f, err := os.Open(filepath.Join(o.OutDir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != len(recs)+1 || len(rows[0]) != len(csvHeader) {
		t.Errorf("results.csv: %d rows, err %v", len(rows), err)
	}
	for _, name := range append([]string{"results.json"}, PlotFiles...) {
		b, err := os.ReadFile(filepath.Join(o.OutDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".png") && !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG", name)
		}
	}
}
