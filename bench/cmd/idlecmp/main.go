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
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gocached/gocached/bench/idle"
	"github.com/gocached/gocached/internal/refmc"
	"github.com/gocached/gocached/internal/testproc"
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
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "idlecmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	list := strings.Split(targets, ",")
	if bins.Gocached == "" {
		bins.Gocached = filepath.Join(dir, "gocached")
		logf("building ./cmd/gocached")
		if err := testproc.GoBuild(ctx, "github.com/gocached/gocached/cmd/gocached", bins.Gocached); err != nil {
			return err
		}
	}
	if bins.Memcached == "" && slices.Contains(list, "memcached") {
		logf("building memcached %s from Debian's source package (once; cached)", refmc.Current.Version)
		if bins.Memcached, err = refmc.Current.Binary(ctx); err != nil {
			return err
		}
	}
	cases, err := idle.Cases(bins, list, dir)
	if err != nil {
		return err
	}
	var results []idle.Result
	for _, c := range cases {
		r, err := idle.Measure(ctx, c, settle, window)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		logf("%s: %.1f wake-ups/s, %.3f %% CPU", c.Name, r.WakeupsPS, r.CPUPct)
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
