// Command idlecmp measures idle servers: gocached on each engine (with its
// defaults, with idle clients connected, with metrics and with a warm-restart
// file) and memcached 1.6.45 and 1.6.18, each started alone on loopback and
// left without requests. It prints how often each server's threads were put
// on a CPU per second and the CPU they used, against the goal of at most 20
// wake-ups a second and 0.2 % of a CPU:
//
//	go run ./bench/cmd/idlecmp                  # every case, 20 s each, ~4 minutes
//	go run ./bench/cmd/idlecmp --window 5s --targets epoll
//
// It runs from the module root, where it builds ./cmd/gocached. memcached
// 1.6.45 is built once from Debian's source package (kept in the test cache).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gocached/gocached/bench/benchmain"
	"github.com/gocached/gocached/bench/idle"
	flag "github.com/spf13/pflag"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "idlecmp:", err)
		os.Exit(1)
	}
}

func run() error {
	targets := "epoll,uring,go,memcached,memcached-1.6.18"
	var bins idle.Binaries
	settle, window := 5*time.Second, 20*time.Second
	var out string
	flag.StringVar(&targets, "targets", targets, "servers to measure")
	flag.DurationVar(&settle, "settle", settle, "time after the start before the window opens")
	flag.DurationVar(&window, "window", window, "measured idle time per case")
	flag.StringVar(&bins.Gocached, "gocached", "", "gocached binary (default: build ./cmd/gocached)")
	flag.StringVar(&bins.Memcached, "memcached", "", "memcached 1.6.45 binary (default: built from Debian's source package)")
	flag.StringVar(&bins.Memcached1618, "memcached-1.6.18", "memcached", "memcached 1.6.18 binary (Debian 12's package)")
	flag.StringVar(&out, "out", "", "also write results.json here")
	flag.Parse()
	env, err := benchmain.Start("idlecmp")
	if err != nil {
		return err
	}
	defer env.Close()
	list := strings.Split(targets, ",")
	if err := env.Build(&bins.Gocached, benchmain.GocachedPkg); err != nil {
		return err
	}
	if slices.Contains(list, "memcached") {
		if err := env.Memcached(&bins.Memcached); err != nil {
			return err
		}
	}
	cases, err := idle.Cases(bins, list, env.Dir)
	if err != nil {
		return err
	}
	var results []idle.Result
	for _, c := range cases {
		r, err := idle.Measure(env.Ctx, c, settle, window)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		benchmain.Logf("%s: %.1f wake-ups/s, %.3f %% CPU", c.Name, r.WakeupsPS, r.CPUPct)
		results = append(results, r)
	}
	if err := idle.WriteMarkdown(os.Stdout, results); err != nil {
		return err
	}
	if out != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(out, append(b, '\n'), 0o644)
	}
	return nil
}
