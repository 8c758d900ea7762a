//go:build linux

// Command enginecmp measures server CPU per request on loopback (or a NAPI
// testbed): gocached's engines and memcached (1.6.45, built once from
// Debian's source package, and Debian 12's 1.6.18), each with one thread
// pinned to one CPU, under the same mcload load pinned to another CPU:
//
//	go run ./bench/cmd/enginecmp                       # 3 shapes x 3 targets x 3 runs, ~3 minutes
//	go run ./bench/cmd/enginecmp --runs 1 --time 2s    # a quick look
//
// It prints a markdown table (req/s, p99, server CPU per request split into
// user and kernel time, steal) and the epoll engine's ratios against the
// others, and with --out writes results.json and report.md. It runs from the
// module root, where it builds ./cmd/gocached and ./bench/cmd/mcload.
package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/gocached/gocached/bench/benchmain"
	"github.com/gocached/gocached/bench/enginecmp"
	flag "github.com/spf13/pflag"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "enginecmp:", err)
		os.Exit(1)
	}
}

func run() error {
	o := enginecmp.DefaultOptions()
	targets, shapes := strings.Join(o.Targets, ","), "64x1,8x4,16x16"
	flag.StringVar(&targets, "targets", targets, "what to compare: epoll, go, uring (each also as epoll-alt etc.: the --gocached-alt build), memcached (1.6.45), memcached-1.6.18, floor (bench/cmd/epollfloor: an epoll server doing next to no user-space work), uring-floor (bench/cmd/uringfloor: the same on io_uring, making the kernel requests of gocached's uring engine)")
	flag.StringVar(&shapes, "shapes", shapes, "loads as CONNSxDEPTH (connections x requests in flight on each)")
	flag.IntVar(&o.Runs, "runs", o.Runs, "repetitions of every cell (medians reported)")
	flag.DurationVar(&o.Time, "time", o.Time, "measured time per run")
	flag.IntVar(&o.Records, "records", o.Records, "key space (mcload -r), preloaded before every run")
	flag.StringVar(&o.KeySize, "keysize", o.KeySize, "mcload -K")
	flag.StringVar(&o.ValueSize, "valuesize", o.ValueSize, "mcload -V")
	flag.Float64Var(&o.Update, "update", o.Update, "set ratio (mcload -u)")
	flag.IntVar(&o.ServerCPU, "server-cpu", o.ServerCPU, "the CPU every server is pinned to")
	flag.IntVar(&o.ClientCPU, "client-cpu", o.ClientCPU, "the CPU mcload is pinned to")
	flag.StringVar(&o.Testbed, "testbed", "", "run on a one-queue NAPI testbed instead of loopback: plain, or threaded (each side's NAPI kthread pinned to its CPU); needs root")
	flag.StringVar(&o.GocachedBin, "gocached", "", "gocached binary (default: build ./cmd/gocached)")
	flag.StringVar(&o.GocachedAltBin, "gocached-alt", "", "a second gocached build, run by the -alt targets (a before/after in one interleaved run)")
	flag.StringVar(&o.FloorBin, "floor", "", "epollfloor binary (default: build ./bench/cmd/epollfloor when a target is floor)")
	flag.StringVar(&o.UringFloorBin, "uring-floor", "", "uringfloor binary (default: build ./bench/cmd/uringfloor when a target is uring-floor)")
	flag.StringVar(&o.MemcachedBin, "memcached", "", "memcached 1.6.45 binary (default: built from Debian's source package, kept in the test cache)")
	flag.StringVar(&o.Memcached1618Bin, "memcached-1.6.18", o.Memcached1618Bin, "memcached 1.6.18 binary (Debian 12's package)")
	flag.StringVar(&o.MCLoadBin, "mcload", "", "mcload binary (default: build ./bench/cmd/mcload)")
	flag.StringVar(&o.OutDir, "out", "", "also write results.json and report.md here")
	flag.Parse()
	o.Targets = strings.Split(targets, ",")
	var err error
	if o.Shapes, err = enginecmp.ParseShapes(shapes); err != nil {
		return err
	}
	o.Log = benchmain.Logf
	env, err := benchmain.Start("enginecmp")
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.Build(&o.GocachedBin, benchmain.GocachedPkg); err != nil {
		return err
	}
	if err := env.Build(&o.MCLoadBin, benchmain.MCLoadPkg); err != nil {
		return err
	}
	if slices.Contains(o.Targets, enginecmp.Floor) {
		if err := env.Build(&o.FloorBin, benchmain.EpollFloorPkg); err != nil {
			return err
		}
	}
	if slices.Contains(o.Targets, enginecmp.UringFloor) {
		if err := env.Build(&o.UringFloorBin, benchmain.UringFloorPkg); err != nil {
			return err
		}
	}
	if slices.Contains(o.Targets, enginecmp.Memcached) {
		if err := env.Memcached(&o.MemcachedBin); err != nil {
			return err
		}
	}
	recs, runErr := enginecmp.Run(env.Ctx, o)
	if len(recs) > 0 {
		if err := enginecmp.WriteMarkdown(os.Stdout, &o, enginecmp.Summarize(recs)); err != nil {
			return err
		}
		if o.OutDir != "" {
			if err := enginecmp.WriteAll(&o, recs); err != nil {
				return err
			}
		}
	}
	return runErr
}
