//go:build linux

package scenario

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/bench"
	"github.com/gocached/gocached/internal/cpuset"
	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/kernel/testbed"
)

// AllScenarios is the upstream evaluation's matrix, in its order, then
// threaded busy polling (its newest rival, Linux 6.19+; reported as skipped,
// with the kernel's reason, where the kernel lacks it).
var AllScenarios = []string{
	"base", "defer10", "defer20", "defer50", "defer200", "napibusy", "fullbusy",
	"suspend0", "suspend10", "suspend20", "suspend50", "suspend200",
	"threadedbusy",
}

// Server names.
const (
	Gocached  = "gocached"
	Memcached = "memcached"
)

// Options configure a scenario run.
type Options struct {
	OutDir    string
	Servers   []string // gocached, memcached
	Scenarios []string
	Loads     []Load
	Runs      int

	Time, Warmup time.Duration // per mcload run
	Records      int
	Update       float64
	KeySize      string
	ValueSize    string
	IADist       string
	Conns        int // mcload -c
	LoadThreads  int // mcload -T
	Depth        int // mcload -d, at MAX and at fixed loads alike
	MultiGet     int // keys per get (mcload --multiget); qps counts requests, not keys
	// FractionOf names the scenario whose MAX an N% load is a share of;
	// "" means each scenario's own. Naming one (e.g. base) offers every
	// scenario the same absolute rate, which CPU-per-query comparisons need:
	// at a share of its own MAX a slower scenario runs at a lower rate and
	// spreads fixed costs over fewer queries.
	FractionOf string
	// Testbed variant: Queues rx/tx queues per veth end (0 = one per server
	// CPU, so that -t auto gives one reactor per server CPU), Threaded NAPI
	// with each end's kthreads pinned to that side's CPUs.
	Queues   int
	Threaded bool

	ServerThreads int // memcached -t
	// GocachedThreads is gocached's -t. "auto" (one reactor per NAPI) is the
	// only setting under which busy polling and IRQ suspension work: an epoll
	// context busy-polls one NAPI, so a reactor serving connections of several
	// NAPIs leaves the others suspended until irq-suspend-timeout fires.
	GocachedThreads string
	ServerCPUs      string // taskset list for the server
	ClientCPUs      string // taskset list for mcload
	ServerMemMB     int

	GocachedBin  string // "" builds ./cmd/gocached
	MemcachedBin string // "" builds memcached 1.6.45 from Debian's source package (refmc)
	// MemcachedVersion is what MemcachedBin -V said, for the report.
	MemcachedVersion string
	MCLoadBin        string // "" builds ./bench/cmd/mcload

	// A run counts as disturbed when steal or other processes' CPU exceed
	// these shares of the machine.
	MaxStealPct, MaxOtherPct float64

	Log func(format string, args ...any) `json:"-"`
}

// DefaultOptions is the full matrix against both servers.
func DefaultOptions() Options {
	return Options{
		OutDir:          "bench-results",
		Servers:         []string{Gocached, Memcached},
		Scenarios:       AllScenarios,
		Loads:           mustLoads("25%,50%,90%,MAX"),
		Runs:            3,
		Time:            5 * time.Second,
		Warmup:          1 * time.Second,
		Records:         100000,
		Update:          0.03,
		KeySize:         "fb_key",
		ValueSize:       "fb_value",
		IADist:          "fb_ia",
		Conns:           8,
		LoadThreads:     1,
		Depth:           1,
		MultiGet:        1,
		ServerThreads:   1,
		GocachedThreads: "auto",
		ServerCPUs:      "1",
		ClientCPUs:      "0",
		ServerMemMB:     1024,
		MaxStealPct:     5,
		// Threaded: receive work on the receiver's core, as behind a NIC;
		// the plain bed charges the server's receive work to the client's
		// core (bench/README.md, "Why the threaded bed").
		Threaded:    true,
		MaxOtherPct: 10,
	}
}

// QuickOptions is the smoke test: the whole pipeline in well under a minute.
func QuickOptions() Options {
	o := DefaultOptions()
	o.Scenarios = []string{"base", "suspend20"}
	o.Loads = mustLoads("5000,MAX")
	o.Runs = 1
	// Debian's package (1.6.18): the smoke test checks the pipeline, not
	// which memcached is ahead, and builds nothing.
	o.MemcachedBin = "/usr/bin/memcached"
	// The plain bed: the smoke test also covers the softirq counters.
	o.Threaded = false
	o.Time, o.Warmup = 2*time.Second, 500*time.Millisecond
	o.Records = 10000
	o.Conns = 2
	return o
}

// Load is one load level: a fixed rate, the closed-loop maximum, or a
// share of the maximum measured first in the same server and scenario.
type Load struct {
	QPS      float64 // fixed rate; 0 with Fraction 0 is MAX
	Fraction float64 // share of MAX, in (0, 1]
}

func (l Load) IsMax() bool { return l.QPS == 0 && l.Fraction == 0 }

func (l Load) String() string {
	switch {
	case l.IsMax():
		return "MAX"
	case l.Fraction > 0:
		return strconv.FormatFloat(100*l.Fraction, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(l.QPS, 'f', -1, 64)
}

// ParseLoads reads a comma-separated list of loads: QPS numbers, MAX, and
// percentages of MAX (e.g. "10000,MAX,50%").
func ParseLoads(s string) ([]Load, error) {
	var out []Load
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case strings.EqualFold(f, "max"):
			out = append(out, Load{})
		case strings.HasSuffix(f, "%"):
			p, err := strconv.ParseFloat(strings.TrimSuffix(f, "%"), 64)
			if err != nil || !(p > 0 && p <= 100) {
				return nil, fmt.Errorf("load %q: want a percentage in (0, 100]", f)
			}
			out = append(out, Load{Fraction: p / 100})
		default:
			q, err := strconv.ParseFloat(f, 64)
			if err != nil || !(q > 0) || math.IsInf(q, 1) {
				return nil, fmt.Errorf("load %q: want a positive QPS, MAX or N%%", f)
			}
			out = append(out, Load{QPS: q})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no loads")
	}
	return out, nil
}

func mustLoads(s string) []Load {
	l, err := ParseLoads(s)
	if err != nil {
		panic(err)
	}
	return l
}

// Supports reports whether server can run scenario, and why not. Debian
// memcached cannot set epoll busy-poll parameters, so only base and deferX
// (device-wide knobs the runner sets through sysfs) apply to it.
func Supports(server, scenario string) (bool, string) {
	m, err := napi.ParseMode(scenario)
	if err != nil {
		return false, err.Error()
	}
	if server == Memcached && (m.BusyPolls() || m.Suspends()) {
		return false, "memcached cannot set epoll busy-poll parameters"
	}
	if server == Memcached && m.ThreadedBusyPoll {
		return false, "threaded busy polling is set through gocached's --poll-mode; the runner sets no threaded mode for memcached"
	}
	return true, ""
}

// Validate checks the options before anything is built.
func (o *Options) Validate() error {
	if len(o.Servers) == 0 || len(o.Scenarios) == 0 || len(o.Loads) == 0 {
		return fmt.Errorf("need at least one server, scenario and load")
	}
	for _, s := range o.Servers {
		if s != Gocached && s != Memcached {
			return fmt.Errorf("unknown server %q (want %s or %s)", s, Gocached, Memcached)
		}
	}
	for _, sc := range o.Scenarios {
		if _, err := napi.ParseMode(sc); err != nil {
			return err
		}
	}
	switch {
	case o.Runs < 1:
		return fmt.Errorf("runs %d must be at least 1", o.Runs)
	case o.Time < 500*time.Millisecond:
		return fmt.Errorf("time %v: at least 500ms per run", o.Time)
	case o.Conns < 1 || o.LoadThreads < 1 || o.Depth < 1 || o.ServerThreads < 1:
		return fmt.Errorf("connections, threads and depths must be at least 1")
	case o.MultiGet < 1 || o.MultiGet > bench.MaxMultiGet:
		return fmt.Errorf("multiget %d is outside [1, %d]", o.MultiGet, bench.MaxMultiGet)
	case o.Queues < 0:
		return fmt.Errorf("queues %d must not be negative", o.Queues)
	case o.Records < 1:
		return fmt.Errorf("records %d must be at least 1", o.Records)
	}
	if o.FractionOf != "" && !slices.Contains(o.Scenarios, o.FractionOf) {
		return fmt.Errorf("--fraction-of %s: not among the scenarios %v", o.FractionOf, o.Scenarios)
	}
	for _, l := range []string{o.ServerCPUs, o.ClientCPUs} {
		if _, err := cpuset.Parse(l); err != nil {
			return fmt.Errorf("cpu list %q: %w", l, err)
		}
	}
	return nil
}

// variant is the testbed the options ask for.
func (o *Options) variant() testbed.Variant {
	q := o.Queues
	if q == 0 {
		cpus, _ := cpuset.Parse(o.ServerCPUs)
		q = max(1, len(cpus))
	}
	v := testbed.Variant{Queues: q, Threaded: o.Threaded}
	if o.Threaded {
		v.ServerCPUs, v.ClientCPUs = o.ServerCPUs, o.ClientCPUs
	}
	return v
}
