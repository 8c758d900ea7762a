// Package mutilatecmp measures tail latency with mutilate, the load
// generator of the IRQ-suspension paper: it finds memcached 1.6.45's peak
// rate with mutilate's closed loop, then offers fractions of that rate in
// mutilate's open loop to memcached and to gocached's engines, one server
// thread pinned to one CPU and mutilate to another, interleaving the
// servers round by round so that a shared machine's drift hits them alike.
package mutilatecmp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/bench/enginecmp"
)

// Targets a comparison can run: enginecmp's names.
const (
	Epoll     = enginecmp.Epoll
	Uring     = enginecmp.Uring
	Go        = enginecmp.Go
	Memcached = enginecmp.Memcached // 1.6.45: the peer, and whose peak sets the loads
)

func knownTarget(t string) bool { return t == Epoll || t == Uring || t == Go || t == Memcached }

// Options configure one comparison.
type Options struct {
	Targets []string
	// Loads are fractions of the peak (0.25 = 25 %), offered in open loop.
	Loads []float64
	// Peak, when positive, is used instead of measuring memcached's peak.
	Peak      float64
	PeakRuns  int // closed-loop runs against memcached; their median QPS is the peak
	Rounds    int // every (load, target) once per round
	Time      int // mutilate -t: measured seconds per run
	Warmup    int // mutilate -w: seconds before the measurement
	Conns     int // mutilate -c (one thread, -T 1)
	Depth     int // mutilate -d
	Records   int // mutilate -r, loaded (--loadonly) into every fresh server
	KeySize   string
	ValueSize string
	IADist    string // mutilate -i
	Update    float64
	ServerCPU int
	ClientCPU int
	MemoryMB  int // the servers' -m
	// A run counts as disturbed, and is left out of the medians, when
	// steal or other processes' CPU exceed these shares of the machine, or
	// when mutilate answered less than MinServedPct of the rate it was
	// asked for (its own CPU was taken, or the server fell behind).
	MaxStealPct, MaxOtherPct, MinServedPct float64
	// QuietWait bounds the wait before each run for a second in which the
	// machine is quiet (busy under MaxOtherPct); 0 does not wait.
	QuietWait time.Duration

	MutilateBin, GocachedBin, MemcachedBin string
	OutDir                                 string
	Log                                    func(format string, args ...any)
}

// DefaultOptions follow the scenario runner's load (the Facebook ETC key,
// value and inter-arrival distributions, 3 % sets, 8 connections at depth
// 1). "exponential" is mutilate's default -i, but that commit's parser
// walks a NULL pointer when the spec has no ":" (a crash with today's
// glibc), so every spec handed to mutilate carries its parameter.
func DefaultOptions() Options {
	return Options{
		Targets:   []string{Epoll, Uring, Memcached},
		Loads:     []float64{0.25, 0.50, 0.75},
		PeakRuns:  3,
		Rounds:    5,
		Time:      5,
		Warmup:    1,
		Conns:     8,
		Depth:     1,
		Records:   20000,
		KeySize:   "fb_key",
		ValueSize: "fb_value",
		IADist:    "fb_ia",
		Update:    0.03,
		ServerCPU: 1,
		ClientCPU: 0,
		MemoryMB:  64,
		// The scenario runner's thresholds.
		MaxStealPct:  5,
		MaxOtherPct:  10,
		MinServedPct: 95,
		QuietWait:    20 * time.Second,
	}
}

// Validate checks o before anything starts.
func (o *Options) Validate() error {
	if len(o.Targets) == 0 {
		return fmt.Errorf("no targets")
	}
	for _, t := range o.Targets {
		if !knownTarget(t) {
			return fmt.Errorf("target %q: want %s, %s, %s or %s", t, Epoll, Uring, Go, Memcached)
		}
	}
	if o.Peak <= 0 && o.MemcachedBin == "" {
		return fmt.Errorf("no peak: give --peak or a memcached binary to measure it on")
	}
	if slices.Contains(o.Targets, Memcached) && o.MemcachedBin == "" {
		return fmt.Errorf("target %s needs its binary", Memcached)
	}
	switch {
	case len(o.Loads) == 0:
		return fmt.Errorf("no loads")
	case o.PeakRuns < 1 || o.PeakRuns > 20:
		return fmt.Errorf("peak runs %d: want 1..20", o.PeakRuns)
	case o.Rounds < 1 || o.Rounds > 50:
		return fmt.Errorf("rounds %d: want 1..50", o.Rounds)
	case o.Time < 1 || o.Time > 120:
		return fmt.Errorf("time %ds: want 1..120", o.Time)
	case o.Warmup < 0 || o.Warmup > 60:
		return fmt.Errorf("warmup %ds: want 0..60", o.Warmup)
	case o.Conns < 1 || o.Conns > 1000 || o.Depth < 1 || o.Depth > 1024:
		return fmt.Errorf("connections 1..1000 and depth 1..1024")
	case o.Records < 1:
		return fmt.Errorf("records %d: want at least 1", o.Records)
	case o.Update < 0 || o.Update > 1:
		return fmt.Errorf("update %g: want 0..1", o.Update)
	case o.ServerCPU < 0 || o.ClientCPU < 0 || o.ServerCPU == o.ClientCPU:
		return fmt.Errorf("server and client need two different CPUs")
	case o.QuietWait < 0 || o.QuietWait > 10*time.Minute:
		return fmt.Errorf("quiet wait %v: want 0..10m", o.QuietWait)
	case o.MemoryMB < 1:
		return fmt.Errorf("memory %d MB: want at least 1", o.MemoryMB)
	case !strings.Contains(o.IADist, ":") && !strings.HasPrefix(o.IADist, "fb_"):
		return fmt.Errorf("iadist %q: give the parameter (e.g. exponential:1): mutilate %s crashes on a bare name", o.IADist, shortSHA)
	}
	return nil
}

// disturbed says why the machine disturbed r ("" if it did not).
func (o *Options) disturbed(r Record) string {
	if r.Error != "" {
		return ""
	}
	var why []string
	if r.StealPct > o.MaxStealPct {
		why = append(why, fmt.Sprintf("steal %.1f %%", r.StealPct))
	}
	if r.OtherCPUPct > o.MaxOtherPct {
		why = append(why, fmt.Sprintf("other processes %.1f %%", r.OtherCPUPct))
	}
	if r.TargetQPS > 0 && r.Report.QPS < o.MinServedPct/100*float64(r.TargetQPS) {
		why = append(why, fmt.Sprintf("served %.0f of %d req/s", r.Report.QPS, r.TargetQPS))
	}
	return strings.Join(why, ", ")
}

// runBound is how long one mutilate invocation may take: its warm-up and
// measurement plus a margin for connecting and the report.
func (o *Options) runBound() time.Duration {
	return time.Duration(o.Warmup+o.Time)*time.Second + time.Minute
}

// ParseLoads reads a comma-separated list of percentages of the peak,
// e.g. "25,50,75", into fractions.
func ParseLoads(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSuffix(strings.TrimSpace(f), "%")
		if f == "" {
			continue
		}
		pct, err := strconv.ParseFloat(f, 64)
		if err != nil || !(pct > 0 && pct <= 100) {
			return nil, fmt.Errorf("load %q: want a percentage of the peak in (0, 100]", f)
		}
		out = append(out, pct/100)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no loads in %q", s)
	}
	return out, nil
}

// TargetQPS is the rate mutilate's -q (an integer) is given for a load.
func TargetQPS(peak, load float64) int {
	q := int(peak*load + 0.5)
	return max(q, 1)
}

// LoadName prints a load as the percentage it was given as.
func LoadName(load float64) string {
	return strconv.FormatFloat(100*load, 'f', -1, 64) + " %"
}
