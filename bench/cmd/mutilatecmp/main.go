//go:build linux

// Command mutilatecmp measures tail latency with mutilate (the IRQ
// suspension paper's load generator): memcached 1.6.45's closed-loop peak
// first, then mutilate's open loop at 25, 50 and 75 % of it against
// memcached and gocached's engines, each a fresh one-thread server pinned
// to one CPU with mutilate on another, interleaved round by round:
//
//	go run ./bench/cmd/mutilatecmp --mutilate /path/to/mutilate            # 5 rounds, about 8 minutes
//	go run ./bench/cmd/mutilatecmp --mutilate M --rounds 1 --time 2 --peak 40000
//
// mutilate is not built here (see bench/README.md); without --mutilate the
// copy the integration suite caches is used if present. It runs from the
// module root, where it builds ./cmd/gocached.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gocached/gocached/bench/benchmain"
	"github.com/gocached/gocached/bench/mutilatecmp"
	flag "github.com/spf13/pflag"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mutilatecmp:", err)
		os.Exit(1)
	}
}

func run() error {
	o := mutilatecmp.DefaultOptions()
	targets, loads := strings.Join(o.Targets, ","), "25,50,75"
	flag.StringVar(&targets, "targets", targets, "servers: epoll, uring, go, memcached (1.6.45)")
	flag.StringVar(&loads, "loads", loads, "open-loop rates, in % of memcached's peak")
	flag.Float64Var(&o.Peak, "peak", 0, "use this peak (req/s) instead of measuring memcached's")
	flag.IntVar(&o.PeakRuns, "peak-runs", o.PeakRuns, "closed-loop runs against memcached; the median is the peak")
	flag.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds; each runs every load against every target once")
	flag.IntVar(&o.Time, "time", o.Time, "mutilate -t: measured seconds per run")
	flag.IntVar(&o.Warmup, "warmup", o.Warmup, "mutilate -w: seconds before the measurement")
	flag.IntVar(&o.Conns, "conns", o.Conns, "mutilate -c (one mutilate thread)")
	flag.IntVar(&o.Depth, "depth", o.Depth, "mutilate -d")
	flag.IntVar(&o.Records, "records", o.Records, "mutilate -r, loaded into each fresh server")
	flag.StringVar(&o.KeySize, "keysize", o.KeySize, "mutilate -K")
	flag.StringVar(&o.ValueSize, "valuesize", o.ValueSize, "mutilate -V")
	flag.StringVar(&o.IADist, "iadist", o.IADist, "mutilate -i (with its parameter, e.g. exponential:1)")
	flag.Float64Var(&o.Update, "update", o.Update, "mutilate -u (set ratio)")
	flag.IntVar(&o.ServerCPU, "server-cpu", o.ServerCPU, "the CPU every server is pinned to")
	flag.IntVar(&o.ClientCPU, "client-cpu", o.ClientCPU, "the CPU mutilate is pinned to")
	flag.IntVar(&o.MemoryMB, "memory", o.MemoryMB, "the servers' -m (MB)")
	flag.Float64Var(&o.MaxStealPct, "max-steal", o.MaxStealPct, "flag runs with more hypervisor steal (% of machine)")
	flag.Float64Var(&o.MaxOtherPct, "max-other", o.MaxOtherPct, "flag runs with more CPU of other processes (% of machine)")
	flag.Float64Var(&o.MinServedPct, "min-served", o.MinServedPct, "flag runs that served less of the asked rate (%)")
	flag.DurationVar(&o.QuietWait, "quiet-wait", o.QuietWait, "before each run, wait at most this long for a second with the machine busy under --max-other")
	flag.StringVar(&o.MutilateBin, "mutilate", "", "mutilate binary of commit "+mutilatecmp.SHA[:7]+" (default: the integration suite's cached build)")
	flag.StringVar(&o.GocachedBin, "gocached", "", "gocached binary (default: build ./cmd/gocached)")
	flag.StringVar(&o.MemcachedBin, "memcached", "", "memcached 1.6.45 binary (default: built from Debian's source package, kept in the test cache)")
	flag.StringVar(&o.OutDir, "out", "", "also write results.json and report.md here")
	flag.Parse()
	o.Targets = strings.Split(targets, ",")
	var err error
	if o.Loads, err = mutilatecmp.ParseLoads(loads); err != nil {
		return err
	}
	if o.MutilateBin == "" {
		if o.MutilateBin, err = cachedMutilate(); err != nil {
			return err
		}
	}
	o.Log = benchmain.Logf
	env, err := benchmain.Start("mutilatecmp")
	if err != nil {
		return err
	}
	defer env.Close()
	if slices.ContainsFunc(o.Targets, func(t string) bool { return t != mutilatecmp.Memcached }) {
		if err := env.Build(&o.GocachedBin, benchmain.GocachedPkg); err != nil {
			return err
		}
	}
	if o.Peak <= 0 || slices.Contains(o.Targets, mutilatecmp.Memcached) {
		if err := env.Memcached(&o.MemcachedBin); err != nil {
			return err
		}
	}
	peak, recs, runErr := mutilatecmp.Run(env.Ctx, o)
	if len(recs) > 0 {
		if err := mutilatecmp.WriteMarkdown(os.Stdout, &o, peak, recs); err != nil {
			return err
		}
		if o.OutDir != "" {
			if err := mutilatecmp.WriteAll(&o, peak, recs); err != nil {
				return err
			}
		}
	}
	return runErr
}

// cachedMutilate is where the integration suite keeps the mutilate it
// builds: the system test cache, else the user's.
func cachedMutilate() (string, error) {
	dirs := []string{"/var/cache/gocached-tests"}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "gocached-tests"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "mutilate-"+mutilatecmp.SHA)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", errors.New("no mutilate: build commit " + mutilatecmp.SHA[:7] + " (bench/README.md says how) and give it with --mutilate")
}
