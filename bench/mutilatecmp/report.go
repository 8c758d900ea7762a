package mutilatecmp

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gocached/gocached/bench"
)

// WriteMarkdown prints the peak, the latency table and the comparison.
func WriteMarkdown(w io.Writer, o *Options, peak Peak, recs []Record) error {
	sums := Summarize(recs)
	p := bench.NewPrinter(w)
	p.Printf("# mutilate %s: get latency at fractions of memcached 1.6.45's peak\n\n", shortSHA)
	p.Printf("Loopback; every server one thread (-t 1, -m %d) pinned to CPU %d, mutilate -T 1 pinned to CPU %d; "+
		"-c %d -d %d -K %s -V %s -i %s -u %g -r %d (loaded into a fresh server before each run), -w %d -t %d.\n",
		o.MemoryMB, o.ServerCPU, o.ClientCPU, o.Conns, o.Depth, o.KeySize, o.ValueSize, o.IADist, o.Update, o.Records, o.Warmup, o.Time)
	if peak.Given {
		p.Printf("Peak: %.0f req/s, given.\n\n", peak.QPS)
	} else {
		p.Printf("Peak: %.0f req/s, the median of %d of %d closed-loop runs (-q 0) against memcached 1.6.45, "+
			"which used %.0f %% of its CPU there.\n\n", peak.QPS, peak.Used, len(peak.Runs), peak.ServerCPUPct)
	}
	p.Printf("%d interleaved round(s). Medians and the p99 range are over the runs the machine did not disturb "+
		"(steal over %g %% or other processes over %g %% of the machine, or under %g %% of the asked rate served); "+
		"latencies are exact percentiles of every get mutilate saved (--save).\n\n",
		o.Rounds, o.MaxStealPct, o.MaxOtherPct, o.MinServedPct)
	p.Printf("| load | -q | server | runs (disturbed) | req/s | p50 µs | p99 µs | p99 range µs | p99.9 µs | server CPU %% | steal %% (max) |\n")
	p.Printf("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sums {
		runs := fmt.Sprintf("%d (%d)", s.Runs, s.Excluded)
		if s.AllDisturbed {
			runs = fmt.Sprintf("%d (all)", s.Runs)
		}
		p.Printf("| %s | %d | %s | %s | %.0f | %.0f | %.0f | %.0f–%.0f | %.0f | %.0f | %.1f (%.1f) |\n",
			LoadName(s.Load), s.TargetQPS, s.Target, runs, s.QPS, s.P50Us, s.P99Us, s.P99MinUs, s.P99MaxUs,
			s.P999Us, s.ServerCPUPct, s.StealPct, s.StealMaxPct)
	}
	if vs := Compare(recs, sums); len(vs) > 0 {
		p.Printf("\ngocached against memcached 1.6.45: median p99 ratio (below 1: lower tail) and the rounds, " +
			"of those where the machine disturbed neither run, in which its p99 was below memcached's of the same round.\n\n")
		p.Printf("| load | gocached | p99 / memcached's | rounds below |\n|---|---|---:|---:|\n")
		for _, v := range vs {
			p.Printf("| %s | %s | %.2f | %d of %d |\n", LoadName(v.Load), v.Target, v.P99Ratio, v.Below, v.Paired)
		}
	}
	return p.Err()
}

// WriteAll writes results.json (peak, records, summaries, comparison) and
// report.md into o.OutDir.
func WriteAll(o *Options, peak Peak, recs []Record) error {
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return err
	}
	sums := Summarize(recs)
	b, err := json.MarshalIndent(struct {
		Peak      Peak      `json:"peak"`
		Records   []Record  `json:"records"`
		Summaries []Summary `json:"summaries"`
		Versus    []Versus  `json:"versus"`
	}{peak, recs, sums, Compare(recs, sums)}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.OutDir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		return err
	}
	if err := WriteMarkdown(f, o, peak, recs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
