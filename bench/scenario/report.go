//go:build linux

package scenario

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gocached/gocached/bench"
)

// Summary folds the repetitions of one server, scenario and load. Medians
// and ranges are over the runs the machine did not disturb (see keep).
type Summary struct {
	Server, Scenario, Load string
	OfferedQPS             float64
	Runs                   int  // runs the medians are over
	Excluded               int  // disturbed runs left out of them
	AllDisturbed           bool // every run was disturbed: medians are over those
	QPS, Avg, P95, P99     Stat
	CPU, CPUNsPerQuery     Stat
	CoreNsPerQuery         Stat
	ClientNsPerQuery       Stat
	MachineNsPerQuery      Stat
	BenchNsPerQuery        Stat
	BusyPollPerQuery       Stat
	NetRxPerQuery          Stat
	Steal                  Stat // % of the machine, over the kept runs
	// QPSvsBase is achieved qps over base's in the same round (see
	// pairedRatios), at MAX only; empty for base itself.
	QPSvsBase      Stat
	Saturated      string // the kept runs' verdicts, e.g. "client" or "client 2, none 1"
	CyclesPerQuery *Stat  // nil: n/a
	Note           string // skipped or failed
}

// Summarize groups records by server, scenario and load, keeping the
// order of first appearance.
func Summarize(recs []Record) []Summary {
	type key struct{ server, scenario, load string }
	var order []key
	groups := map[key][]Record{}
	for _, r := range recs {
		k := key{r.Server, r.Scenario, r.Load}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []Summary
	for _, k := range order {
		g := groups[k]
		s := Summary{Server: k.server, Scenario: k.scenario, Load: k.load}
		for _, r := range g {
			switch {
			case r.Skipped != "":
				s.Note = "skipped: " + r.Skipped
			case r.Error != "" || r.Result == nil:
				s.Note = "error: " + r.Error
			}
		}
		kept, excluded, all := keep(g)
		s.Runs, s.Excluded, s.AllDisturbed = len(kept), excluded, all
		var core []float64
		var qps, avg, p95, p99, cpu, nsq, cli, mach, own, bp, rx, steal, cyc []float64
		sat := map[string]int{}
		for _, r := range kept {
			s.OfferedQPS = r.OfferedQPS
			qps = append(qps, r.Result.QPS)
			avg = append(avg, r.Result.Latency.Avg)
			p95 = append(p95, r.Result.Latency.P95)
			p99 = append(p99, r.Result.Latency.P99)
			cpu = append(cpu, r.Usage.ServerCPUPct)
			nsq = append(nsq, r.CPUNsPerQuery)
			core = append(core, r.CoreNsPerQuery)
			cli = append(cli, r.ClientNsPerQuery)
			mach = append(mach, r.MachineNsPerQuery)
			own = append(own, r.BenchNsPerQuery)
			bp = append(bp, r.BusyPollPerQuery)
			rx = append(rx, r.NetRxPerQuery)
			steal = append(steal, r.Usage.StealPct)
			sat[r.Saturated]++
			if r.CyclesPerQuery != nil {
				cyc = append(cyc, *r.CyclesPerQuery)
			}
		}
		s.QPS, s.Avg, s.P95, s.P99 = statOf(qps), statOf(avg), statOf(p95), statOf(p99)
		s.CPU, s.CPUNsPerQuery, s.BusyPollPerQuery, s.NetRxPerQuery = statOf(cpu), statOf(nsq), statOf(bp), statOf(rx)
		s.ClientNsPerQuery, s.MachineNsPerQuery, s.Steal = statOf(cli), statOf(mach), statOf(steal)
		s.BenchNsPerQuery, s.CoreNsPerQuery = statOf(own), statOf(core)
		// At MAX only: at N% each scenario is offered a share of its own MAX.
		if k.scenario != "base" && k.load == "MAX" {
			s.QPSvsBase = statOf(pairedRatios(recs, k.server, k.load, k.scenario, "base",
				func(r Record) float64 { return r.Result.QPS }))
		}
		s.Saturated = verdicts(sat)
		if len(cyc) > 0 && len(cyc) == s.Runs {
			c := statOf(cyc)
			s.CyclesPerQuery = &c
		}
		out = append(out, s)
	}
	return out
}

// verdicts folds per-run saturation verdicts: the one verdict when the
// runs agree, else each with its count, most frequent first.
func verdicts(n map[string]int) string {
	if len(n) == 1 {
		for k := range n {
			return k
		}
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if n[a] != n[b] {
			return n[b] - n[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, n[k])
	}
	return strings.Join(parts, ", ")
}

// WriteMarkdown writes the report table in the series' layout, one row per
// scenario, load and server (memcached next to gocached).
func WriteMarkdown(w io.Writer, o *Options, sums []Summary, hwNote string) error {
	// Rows by scenario, then load, then server: memcached next to gocached.
	loadRank := map[string]int{}
	for _, s := range sums {
		if _, ok := loadRank[s.Load]; !ok {
			loadRank[s.Load] = len(loadRank)
		}
	}
	rows := slices.Clone(sums)
	slices.SortStableFunc(rows, func(a, b Summary) int {
		if c := scenarioIndex(a.Scenario) - scenarioIndex(b.Scenario); c != 0 {
			return c
		}
		if c := loadRank[a.Load] - loadRank[b.Load]; c != 0 {
			return c
		}
		return strings.Compare(a.Server, b.Server)
	})
	p := bench.NewPrinter(w)
	p.Printf("# gocached scenario report\n\n")
	p.Printf("Testbed %s. Load: mcload -K %s -V %s -i %s -r %d -u %g --multiget %d, %d connections × depth %d at every load "+
		"(MAX: closed loop; N%%: open loop at N %% of the median undisturbed MAX of the same server and %s), "+
		"%gs measured after %gs warmup, %d interleaved round(s). Server pinned to CPU %s (gocached -t %s, memcached -t %d), client to CPU %s.\n\n",
		o.variant(), o.KeySize, o.ValueSize, o.IADist, o.Records, o.Update, o.MultiGet, o.Conns*o.LoadThreads, o.Depth, fractionOf(o),
		o.Time.Seconds(), o.Warmup.Seconds(), o.Runs, o.ServerCPUs, o.GocachedThreads, o.ServerThreads, o.ClientCPUs)
	if o.MemcachedVersion != "" {
		p.Printf("memcached: %s.\n\n", o.MemcachedVersion)
	}
	p.Printf("Latencies in µs from the scheduled send time; cpu = the server's run time in %% of one CPU; ns/q = CPU time per "+
		"answered query of the server process (srv), the server's core (core: the server, its NAPI kthread and the "+
		"interrupt work there), the load generator (cli), the benchmark as a whole (bench: both "+
		"processes, both ends' NAPI kthreads, all softirq and irq time) and every CPU of the machine (all: other tenants "+
		"included); sat = whose cores were full (≥ %d %% busy of the time not "+
		"stolen; server? = a busy-polling server, whose core is full at any load). Medians over runs with steal ≤ %g %% "+
		"and other processes ≤ %g %% of the machine; ± is the range (max-min) over those runs; steal is the median "+
		"over them. qps/base (MAX rows): achieved qps over base's in the same interleaving round, median and range of those ratios "+
		"(drift that moves both cancels). Process times are the scheduler's exact run time and a core's busy time is its "+
		"wall clock less idle, iowait and steal: this kernel samples busy time by the tick, which misses most of the "+
		"short bursts of a core that sleeps between requests.\n\n", SaturatedBusyPct, o.MaxStealPct, o.MaxOtherPct)
	p.Printf("| testcase | server | load | qps | qps/base | avglat | 95%%lat | 99%%lat | cpu | srv ns/q | core ns/q | cli ns/q | bench ns/q | all ns/q | busypoll/q | netrx/q | sat | steal | note |\n")
	p.Printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n")
	for _, s := range rows {
		if s.Runs == 0 {
			p.Printf("| %s | %s | %s | | | | | | | | | | | | | | | %s |\n", s.Scenario, s.Server, s.Load, s.Note)
			continue
		}
		note := ""
		switch {
		case s.AllDisturbed:
			note = fmt.Sprintf("all %d runs disturbed", s.Runs)
		case s.Excluded > 0:
			note = fmt.Sprintf("%d disturbed run(s) excluded", s.Excluded)
		}
		if s.CyclesPerQuery != nil {
			note = strings.TrimPrefix(note+fmt.Sprintf("; %.0f cycles/q", s.CyclesPerQuery.Median), "; ")
		}
		vsBase := ""
		if s.QPSvsBase.Median > 0 {
			vsBase = withRange(s.QPSvsBase, "%.2f")
		}
		p.Printf("| %s | %s | %s | %s | %s | %.0f | %.0f | %s | %s | %s | %s | %.0f | %s | %.0f | %.2f | %.2f | %s | %.1f%% | %s |\n",
			s.Scenario, s.Server, s.Load, withRange(s.QPS, "%.0f"), vsBase, s.Avg.Median, s.P95.Median,
			withRange(s.P99, "%.0f"), withRange(s.CPU, "%.0f%%"), withRange(s.CPUNsPerQuery, "%.0f"),
			withRange(s.CoreNsPerQuery, "%.0f"), s.ClientNsPerQuery.Median, withRange(s.BenchNsPerQuery, "%.0f"), s.MachineNsPerQuery.Median,
			s.BusyPollPerQuery.Median, s.NetRxPerQuery.Median, s.Saturated, s.Steal.Median, note)
	}
	if hwNote != "" {
		p.Printf("\ncycles/q: %s\n", hwNote)
	}
	return p.Err()
}

func withRange(s Stat, format string) string {
	v := fmt.Sprintf(format, s.Median)
	if s.Max > s.Min {
		v += " ±" + fmt.Sprintf(format, s.Max-s.Min)
	}
	return v
}

func scenarioIndex(name string) int {
	if i := slices.Index(AllScenarios, name); i >= 0 {
		return i
	}
	return len(AllScenarios)
}

// csvHeader names the columns of WriteCSV.
var csvHeader = []string{"server", "scenario", "variant", "load", "offered_qps", "run", "qps", "requests", "errors", "misses",
	"avg_us", "p50_us", "p95_us", "p99_us", "max_us", "send_lag_p99_us", "server_cpu_pct", "client_cpu_pct",
	"kthread_cpu_pct", "machine_cpu_pct", "server_core_busy_pct", "client_core_busy_pct", "saturated",
	"cpu_ns_per_query", "core_ns_per_query", "client_cpu_ns_per_query", "machine_cpu_ns_per_query", "bench_cpu_ns_per_query", "busy_poll_per_query", "net_rx_per_query", "cycles_per_query", "instructions_per_query",
	"steal_pct", "other_cpu_pct", "irq_cpu_pct", "disturbed", "skipped", "error"}

// WriteCSV writes one row per record.
func WriteCSV(w io.Writer, recs []Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	opt := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return f(*v)
	}
	for _, r := range recs {
		row := []string{r.Server, r.Scenario, r.Variant, r.Load, f(r.OfferedQPS), strconv.Itoa(r.Run)}
		if res := r.Result; res != nil {
			row = append(row, f(res.QPS), strconv.FormatInt(res.Requests, 10), strconv.FormatInt(res.Errors, 10),
				strconv.FormatInt(res.Misses, 10), f(res.Latency.Avg), f(res.Latency.P50), f(res.Latency.P95),
				f(res.Latency.P99), f(res.Latency.Max), f(res.SendLag.P99))
		} else {
			row = append(row, make([]string, 10)...)
		}
		u := r.Usage
		row = append(row, f(u.ServerCPUPct), f(u.ClientCPUPct), f(u.KthreadCPUPct), f(u.MachineCPUPct),
			f(u.ServerCoreBusy), f(u.ClientCoreBusy), r.Saturated,
			f(r.CPUNsPerQuery), f(r.CoreNsPerQuery), f(r.ClientNsPerQuery), f(r.MachineNsPerQuery), f(r.BenchNsPerQuery), f(r.BusyPollPerQuery),
			f(r.NetRxPerQuery), opt(r.CyclesPerQuery), opt(r.InstructionsPerQry), f(u.StealPct), f(u.OtherCPUPct),
			f(u.IRQCPUPct), r.Disturbed, r.Skipped, r.Error)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteAll writes results.json, results.csv, report.md and the plots into
// o.OutDir.
func WriteAll(o *Options, recs []Record, hwNote string) error {
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return err
	}
	sums := Summarize(recs)
	write := func(name string, fn func(io.Writer) error) error {
		f, err := os.Create(filepath.Join(o.OutDir, name))
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		return f.Close()
	}
	if err := write("results.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Options Options   `json:"options"`
			Records []Record  `json:"records"`
			Summary []Summary `json:"summary"`
		}{*o, recs, sums})
	}); err != nil {
		return err
	}
	if err := write("results.csv", func(w io.Writer) error { return WriteCSV(w, recs) }); err != nil {
		return err
	}
	if err := write("report.md", func(w io.Writer) error { return WriteMarkdown(w, o, sums, hwNote) }); err != nil {
		return err
	}
	return WritePlots(o.OutDir, sums)
}

func fractionOf(o *Options) string {
	if o.FractionOf == "" {
		return "scenario"
	}
	return "scenario " + o.FractionOf + " (the same absolute rate for every scenario)"
}
