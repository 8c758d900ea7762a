//go:build linux

// Command wakedelay shows how long a server's busiest thread (its reactor,
// under load) waits for a CPU each time it is woken, and what ran on that
// CPU meanwhile: the CPU idle (waking it is the wait), the server's own
// other threads, or other processes. Start the server and its load, then:
//
//	sudo go run ./bench/cmd/wakedelay --pid $(pidof gocached) --window 2s
//
// It reads the scheduler's tracepoints through tracefs (root), for
// --window, and restores tracefs as it found it.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/gocached/gocached/bench/idle"
	"github.com/gocached/gocached/bench/wakedelay"
	flag "github.com/spf13/pflag"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "wakedelay:", err)
		os.Exit(1)
	}
}

func run() error {
	pid := flag.Int("pid", 0, "the server's process id")
	tid := flag.Int("tid", 0, "the thread to follow (default: the one using most CPU over --pick)")
	pick := flag.Duration("pick", 500*time.Millisecond, "how long to watch the threads' CPU to pick the busiest")
	window := flag.Duration("window", 2*time.Second, "how long to trace")
	flag.Parse()
	if *pid <= 0 {
		return fmt.Errorf("--pid is required")
	}
	if *tid == 0 {
		t, err := wakedelay.Busiest(*pid, *pick)
		if err != nil {
			return err
		}
		*tid = t
	}
	trace, err := wakedelay.Capture(*window)
	if err != nil {
		return err
	}
	threads, err := idle.RunTimes(*pid)
	if err != nil {
		return err
	}
	own := map[int]bool{}
	for t := range threads {
		own[t] = true
	}
	rep, err := wakedelay.Parse(strings.NewReader(string(trace)), *tid, own)
	if err != nil {
		return err
	}
	report(rep, *window)
	return nil
}

func report(rep *wakedelay.Report, window time.Duration) {
	q := wakedelay.Quantile
	d := rep.Delays
	fmt.Printf("thread %d: %d wake-ups in %v; wait for a CPU p50 %.0f, p90 %.0f, p99 %.0f, p99.9 %.0f, max %.0f µs\n",
		rep.TID, len(d), window, q(d, .5), q(d, .9), q(d, .99), q(d, .999), q(d, 1))
	long := 0
	for _, x := range d {
		if x > wakedelay.LongWait {
			long++
		}
	}
	fmt.Printf("waits over %d µs: %d; the CPU meanwhile ran:\n", wakedelay.LongWait, long)
	kinds := make([]string, 0, len(rep.Held))
	for k := range rep.Held {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return rep.Held[kinds[i]] > rep.Held[kinds[j]] })
	for _, k := range kinds {
		fmt.Printf("  %-16s in %5d waits, %8.0f µs in all\n", k, rep.Waits[k], rep.Held[k])
	}
	s := rep.OwnSlices
	fmt.Printf("the server's other threads: %d runs, %.1f ms in all; a run p50 %.0f, p99 %.0f, max %.0f µs\n",
		len(s), sum(s)/1e3, q(s, .5), q(s, .99), q(s, 1))
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}
