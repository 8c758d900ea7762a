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

func TestPlan(t *testing.T) {
	str := func(ls []Load) string {
		var s []string
		for _, l := range ls {
			s = append(s, l.String())
		}
		return strings.Join(s, ",")
	}
	tests := []struct{ in, maxPhase, rest string }{
		{"5000,MAX", "", "5000,MAX"},
		{"50%,5000", "MAX", "50%,5000"},
		{"25%,MAX,90%", "MAX", "25%,90%"},
		{"MAX", "", "MAX"},
	}
	for _, tt := range tests {
		m, r := plan(mustLoads(tt.in))
		if str(m) != tt.maxPhase || str(r) != tt.rest {
			t.Errorf("plan(%s) = [%s] [%s], want [%s] [%s]", tt.in, str(m), str(r), tt.maxPhase, tt.rest)
		}
	}
}

func TestRotation(t *testing.T) {
	cells := []string{"a", "b", "c"}
	for round, want := range map[int]string{1: "abc", 2: "bca", 3: "cab", 4: "abc"} {
		if got := strings.Join(rotation(cells, round), ""); got != want {
			t.Errorf("round %d: %s, want %s", round, got, want)
		}
	}
	if strings.Join(cells, "") != "abc" {
		t.Error("rotation changed its input")
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
		{Gocached, "threadedbusy", true}, {Memcached, "threadedbusy", false},
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
	a.perCPU = map[int]SystemCPU{0: {User: 500, Idle: 2500, Steal: 10}, 1: {User: 500, System: 500, Idle: 2500, SoftIRQ: 100}}
	b.perCPU = map[int]SystemCPU{0: {User: 550, Idle: 2640, Steal: 14}, 1: {User: 600, System: 550, Idle: 2540, SoftIRQ: 116}}
	a.kthreads, b.kthreads = 7, 17
	a.cliKthr, b.cliKthr = 1, 5
	// Exact run times: these, not the sampled ticks, give the CPU shares.
	a.serverNs, b.serverNs = 5e9, 6e9
	a.clientNs, b.clientNs = 1e9, 1.4e9
	a.kthreadNs, b.kthreadNs = 0, 1e8
	a.cliKthrNs, b.cliKthrNs = 0, 4e7
	u := usage(a, b, []int{1}, []int{0})
	// 2 s = 200 wall ticks per CPU. Server 1 s of exact run time in 2 s.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"server cpu", u.ServerCPUPct, 50},
		{"client cpu", u.ClientCPUPct, 20},
		{"steal", u.StealPct, 1},
		{"irq", u.IRQCPUPct, 4},
		{"other", u.OtherCPUPct, 100 * float64(200-100-40-10-4) / 400},
		{"kthreads", u.KthreadCPUPct, 5},
		{"client kthreads", u.CliKthreadCPUPct, 2},
		// cpu1: 166 sampled busy ticks, more than the 160 the wall clock
		// leaves after idle, so 166; cpu0: 200 - 140 idle - 4 stolen = 56,
		// more than its 50 sampled. 222 busy ticks, 46 of them other
		// tenants' (sampled) process time.
		{"bench", u.BenchCPUPct, 100 * float64(222-46) / 100 / 2},
		{"machine", u.MachineCPUPct, 100 * float64(222) / 100 / 2},
		{"server core", u.ServerCoreBusy, 100 * 166.0 / 200},
		{"client core", u.ClientCoreBusy, 100 * 56.0 / 196},
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
	// The disturbed run (4990 qps, p99 300) is out of the medians.
	if s.Runs != 2 || s.Excluded != 1 || s.QPS.Median != 5005 || s.P99 != (Stat{150, 100, 200}) || s.CPU.Median != 21 {
		t.Errorf("summary %+v", s)
	}
	if sp := s.P99.Spread(); math.Abs(sp-100.0/150) > 1e-12 {
		t.Errorf("p99 spread %g, want 2/3", sp)
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
	for _, want := range []string{"| testcase | server | load | qps | qps/base | avglat | 95%lat | 99%lat | cpu |",
		"| base | gocached | 5000 | 5000 |  | 50 | 80 | 100 | 20% | 40000 |", "| base | memcached | MAX | 50000 |",
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

func TestKeepExcludesDisturbed(t *testing.T) {
	ok := fakeRecord(Gocached, "base", "MAX", 0, 100, 1, 1)
	bad := ok
	bad.Disturbed = "steal 30%"
	failed := Record{Server: Gocached, Scenario: "base", Load: "MAX", Error: "boom"}
	kept, excl, all := keep([]Record{bad, ok, failed, bad})
	if len(kept) != 1 || excl != 2 || all {
		t.Errorf("keep: %d kept, %d excluded, all %v", len(kept), excl, all)
	}
	kept, excl, all = keep([]Record{bad, failed, bad})
	if len(kept) != 2 || excl != 0 || !all {
		t.Errorf("keep of only disturbed: %d kept, %d excluded, all %v", len(kept), excl, all)
	}
	if kept, _, _ := keep([]Record{failed}); len(kept) != 0 {
		t.Error("a failed run was kept")
	}
}

// A disturbed run with an outlying rate must not move the median, nor
// the MAX that the percentages are taken of.
func TestMedianExcludesDisturbed(t *testing.T) {
	var recs []Record
	for i, q := range []float64{100, 110, 1000, 90} {
		r := fakeRecord(Gocached, "suspend20", "MAX", 0, q, 50, 80)
		r.Run = i + 1
		if q == 1000 {
			r.Disturbed = "steal 40.0%"
		}
		recs = append(recs, r)
	}
	recs = append(recs, fakeRecord(Gocached, "base", "MAX", 0, 5, 50, 80))
	s := Summarize(recs)[0]
	if s.QPS.Median != 100 || s.QPS.Max != 110 || s.Runs != 3 || s.Excluded != 1 || s.AllDisturbed {
		t.Errorf("summary %+v", s)
	}
	if got := medianMaxQPS(recs, cell{Gocached, "suspend20"}); got != 100 {
		t.Errorf("medianMaxQPS = %g, want 100", got)
	}
	if got := medianMaxQPS(recs, cell{Memcached, "suspend20"}); got != 0 {
		t.Errorf("medianMaxQPS of no runs = %g", got)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		srv, cli float64
		polls    bool
		want     string
	}{
		{40, 99, false, SatClient},
		{95, 60, false, SatServer},
		{95, 60, true, SatPolling},
		{99, 99, true, SatBoth},
		{91, 90, false, SatBoth},
		{89.9, 89.9, false, SatNone},
		{0, 0, false, SatNone},
	}
	for _, tt := range tests {
		if got := classify(tt.srv, tt.cli, tt.polls); got != tt.want {
			t.Errorf("classify(%g, %g, %v) = %s, want %s", tt.srv, tt.cli, tt.polls, got, tt.want)
		}
	}
}

func TestCoreBusyPct(t *testing.T) {
	d := map[int]SystemCPU{
		0: {User: 30, System: 20, SoftIRQ: 10, Idle: 20, Steal: 20}, // 60 busy of 80 available
		1: {User: 10, Idle: 90},
	}
	if got := coreBusyPct(d, []int{0}, 100); math.Abs(got-75) > 1e-9 {
		t.Errorf("cpu0 busy %g, want 75", got)
	}
	if got := coreBusyPct(d, []int{0, 1}, 100); math.Abs(got-100*70.0/180) > 1e-9 {
		t.Errorf("cpu0+1 busy %g", got)
	}
	if got := coreBusyPct(d, []int{7}, 100); got != 0 {
		t.Errorf("absent cpu busy %g", got)
	}
	if got := coreBusyPct(map[int]SystemCPU{0: {Steal: 5}}, []int{0}, 5); got != 0 {
		t.Errorf("all-stolen cpu busy %g", got)
	}
	// Short bursts lose their ticks: 20 sampled busy ticks, but only 100 of
	// 200 wall ticks idle, so the core was busy half the time.
	if got := coreBusyPct(map[int]SystemCPU{0: {User: 20, Idle: 100}}, []int{0}, 200); math.Abs(got-50) > 1e-9 {
		t.Errorf("bursty cpu busy %g, want 50", got)
	}
}

func TestVerdicts(t *testing.T) {
	if got := verdicts(map[string]int{SatClient: 3}); got != "client" {
		t.Errorf("one verdict: %q", got)
	}
	if got := verdicts(map[string]int{SatNone: 1, SatClient: 2}); got != "client 2, none 1" {
		t.Errorf("mixed verdicts: %q", got)
	}
}

func TestParseReactorStats(t *testing.T) {
	in := "STAT reactor:0:napi_id 426\r\nSTAT reactor:0:epoll_waits 10\r\nSTAT reactor:0:events 30\r\n" +
		"STAT reactor:0:poll_mode suspend20\r\nSTAT reactor:1:epoll_waits 5\r\nSTAT reactor:1:max_batch 9\r\n" +
		"STAT reactor:1:events 7\r\nSTAT reactor:1:wait_ns 1000\r\nEND\r\n"
	m, err := parseReactorStats(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"epoll_waits": 15, "events": 37, "wait_ns": 1000}
	if len(m) != len(want) {
		t.Errorf("got %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %d, want %d", k, m[k], v)
		}
	}
	if _, err := parseReactorStats(strings.NewReader("STAT reactor:0:events 1\r\n")); err == nil {
		t.Error("no END accepted")
	}
}

// Ratios pair runs of the same round, so a round where the machine was
// slow for both scenarios still gives the true ratio.
func TestPairedRatios(t *testing.T) {
	var recs []Record
	for run, q := range []float64{100, 50, 80} { // the machine's speed per round
		b := fakeRecord(Gocached, "base", "MAX", 0, q, 1, 1)
		s := fakeRecord(Gocached, "suspend20", "MAX", 0, 1.1*q, 1, 1)
		b.Run, s.Run = run+1, run+1
		recs = append(recs, b, s)
	}
	recs = append(recs, fakeRecord(Memcached, "base", "MAX", 0, 7, 1, 1))
	qps := func(r Record) float64 { return r.Result.QPS }
	got := pairedRatios(recs, Gocached, "MAX", "suspend20", "base", qps)
	if len(got) != 3 {
		t.Fatalf("ratios %v", got)
	}
	for _, r := range got {
		if math.Abs(r-1.1) > 1e-9 {
			t.Errorf("ratio %g, want 1.1", r)
		}
	}
	// A disturbed pair is left out while clean ones exist.
	recs[2].Disturbed = "steal 30%"
	recs[3].Result = &bench.Result{QPS: 500}
	if got := pairedRatios(recs, Gocached, "MAX", "suspend20", "base", qps); len(got) != 2 {
		t.Errorf("with a disturbed pair: %v", got)
	}
	s := Summarize(recs)
	if s[1].Scenario != "suspend20" || math.Abs(s[1].QPSvsBase.Median-1.1) > 1e-9 || s[0].QPSvsBase.Median != 0 {
		t.Errorf("summaries: %+v / %+v", s[0].QPSvsBase, s[1].QPSvsBase)
	}
}

func TestFractionOfValidate(t *testing.T) {
	o := QuickOptions()
	o.FractionOf = "base"
	if err := o.Validate(); err != nil {
		t.Errorf("fraction of base: %v", err)
	}
	o.FractionOf = "defer20" // not in the quick scenarios
	if err := o.Validate(); err == nil {
		t.Error("fraction of a scenario that does not run was accepted")
	}
}
