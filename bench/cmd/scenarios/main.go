//go:build linux

// Command scenarios runs the IRQ-suspension evaluation matrix on the netns
// testbed, for gocached and for Debian memcached under the same load, and
// writes results.json, results.csv, report.md and PNG plots to --out:
//
//	go run ./bench/cmd/scenarios --out /tmp/results          # full matrix
//	go run ./bench/cmd/scenarios --quick --out /tmp/smoke    # under a minute
//
// It needs root (network namespaces) and runs from the module root, where
// it builds ./cmd/gocached and ./bench/cmd/mcload. See bench/README.md.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gocached/gocached/bench/benchmain"
	"github.com/gocached/gocached/bench/scenario"
	flag "github.com/spf13/pflag"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scenarios:", err)
		os.Exit(1)
	}
}

func run() error {
	quick := false
	for _, a := range os.Args[1:] {
		quick = quick || a == "--quick"
	}
	o := scenario.DefaultOptions()
	if quick {
		o = scenario.QuickOptions()
	}
	var servers, scenarios, loads, from string
	bedKind := map[bool]string{false: "plain", true: "threaded"}[o.Threaded]
	flag.StringVar(&from, "from", "", "rewrite report.md, results.csv and plots into --out from this results.json, running nothing")
	flag.Bool("quick", false, "smoke mode: base and suspend20, loads 5000 and MAX, 2s runs (under 60s)")
	flag.StringVar(&o.OutDir, "out", o.OutDir, "directory for results.json, results.csv, report.md and plots")
	flag.StringVar(&servers, "server", strings.Join(o.Servers, ","), "servers under test: gocached, memcached or both")
	flag.StringVar(&scenarios, "scenarios", strings.Join(o.Scenarios, ","), "poll-mode scenarios")
	flag.StringVar(&loads, "loads", loadsString(o.Loads), "loads: QPS values, MAX, N% of MAX")
	flag.IntVar(&o.Runs, "runs", o.Runs, "interleaved rounds: repetitions of every run (median and range reported)")
	flag.DurationVar(&o.Time, "time", o.Time, "measured time per run")
	flag.DurationVar(&o.Warmup, "warmup", o.Warmup, "warmup per run")
	flag.IntVar(&o.Records, "records", o.Records, "key space (mcload -r)")
	flag.Float64Var(&o.Update, "update", o.Update, "set ratio (mcload -u)")
	flag.StringVar(&o.KeySize, "keysize", o.KeySize, "mcload -K")
	flag.StringVar(&o.ValueSize, "valuesize", o.ValueSize, "mcload -V")
	flag.StringVar(&o.IADist, "iadist", o.IADist, "mcload -i")
	flag.IntVar(&o.Conns, "connections", o.Conns, "mcload -c")
	flag.IntVar(&o.LoadThreads, "load-threads", o.LoadThreads, "mcload -T")
	flag.IntVar(&o.Depth, "depth", o.Depth, "mcload -d, at MAX and fixed loads alike")
	flag.StringVar(&o.FractionOf, "fraction-of", o.FractionOf, "scenario whose MAX the N% loads are shares of (default: each scenario's own)")
	flag.IntVar(&o.MultiGet, "multiget", o.MultiGet, "keys per get request (mcload --multiget)")
	flag.IntVar(&o.Queues, "queues", o.Queues, "veth queues per end (0 = one per --server-cpus CPU)")
	flag.StringVar(&bedKind, "testbed", bedKind, "plain (receive work on the sender's core) or threaded (NAPI kthreads pinned per side)")
	flag.IntVar(&o.ServerThreads, "server-threads", o.ServerThreads, "memcached -t")
	flag.StringVar(&o.GocachedThreads, "gocached-threads", o.GocachedThreads, "gocached -t (auto = one reactor per NAPI)")
	flag.StringVar(&o.ServerCPUs, "server-cpus", o.ServerCPUs, "taskset CPU list for the server")
	flag.StringVar(&o.ClientCPUs, "client-cpus", o.ClientCPUs, "taskset CPU list for mcload")
	flag.IntVar(&o.ServerMemMB, "server-memory", o.ServerMemMB, "server -m in MB")
	flag.StringVar(&o.GocachedBin, "gocached", "", "gocached binary (default: build ./cmd/gocached)")
	flag.StringVar(&o.MemcachedBin, "memcached", o.MemcachedBin, "memcached binary (default: 1.6.45 built from Debian's source package, kept in the test cache)")
	flag.StringVar(&o.MCLoadBin, "mcload", "", "mcload binary (default: build ./bench/cmd/mcload)")
	flag.Float64Var(&o.MaxStealPct, "max-steal", o.MaxStealPct, "flag runs with more hypervisor steal (% of machine)")
	flag.Float64Var(&o.MaxOtherPct, "max-other", o.MaxOtherPct, "flag runs with more CPU of other processes (% of machine)")
	flag.Parse()
	switch bedKind {
	case "plain":
		o.Threaded = false
	case "threaded":
		o.Threaded = true
	default:
		return fmt.Errorf("--testbed %q: want plain or threaded", bedKind)
	}
	o.Servers = splitList(servers)
	o.Scenarios = splitList(scenarios)
	var err error
	if o.Loads, err = scenario.ParseLoads(loads); err != nil {
		return err
	}
	o.Log = benchmain.Logf

	if from != "" {
		return rereport(from, o.OutDir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	recs, runErr := scenario.Run(ctx, o)
	hwNote := ""
	if err := scenario.HWCountersAvailable(); err != nil {
		hwNote = "n/a: no hardware counters here (" + err.Error() + ")"
	}
	if len(recs) > 0 {
		if err := scenario.WriteAll(&o, recs, hwNote); err != nil {
			return err
		}
		o.Log("wrote %s/{results.json,results.csv,report.md,%s} in %v", o.OutDir, strings.Join(scenario.PlotFiles, ","),
			time.Since(start).Round(time.Second))
	}
	return runErr
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func loadsString(ls []scenario.Load) string {
	var s []string
	for _, l := range ls {
		s = append(s, l.String())
	}
	return strings.Join(s, ",")
}

// rereport writes the outputs again from a results.json, so that a report
// layout change applies to runs already made.
func rereport(path, out string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc struct {
		Options scenario.Options  `json:"options"`
		Records []scenario.Record `json:"records"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	doc.Options.OutDir = out
	hwNote := ""
	if err := scenario.HWCountersAvailable(); err != nil {
		hwNote = "n/a: no hardware counters here (" + err.Error() + ")"
	}
	return scenario.WriteAll(&doc.Options, doc.Records, hwNote)
}
