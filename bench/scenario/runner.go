//go:build linux

package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/bench"
	"github.com/gocached/gocached/internal/cpuset"
	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/refmc"
	"github.com/gocached/gocached/internal/testproc"
	"github.com/gocached/gocached/kernel/testbed"
)

// Record is one measured run of one server, scenario and load.
type Record struct {
	Server     string        `json:"server"`
	Scenario   string        `json:"scenario"`
	Load       string        `json:"load"`        // as given: 10000, MAX, 50%
	OfferedQPS float64       `json:"offered_qps"` // the target rate; 0 = closed loop
	Run        int           `json:"run"`         // the interleaving round
	Variant    string        `json:"variant"`
	Result     *bench.Result `json:"result,omitempty"`
	Usage      Usage         `json:"usage"`

	CPUNsPerQuery      float64  `json:"cpu_ns_per_query"`         // server process
	CoreNsPerQuery     float64  `json:"core_ns_per_query"`        // the server's cores: process, NAPI kthreads, interrupts
	ClientNsPerQuery   float64  `json:"client_cpu_ns_per_query"`  // load generator process
	MachineNsPerQuery  float64  `json:"machine_cpu_ns_per_query"` // every CPU, softirq and kthreads included
	BenchNsPerQuery    float64  `json:"bench_cpu_ns_per_query"`   // the same without other tenants' processes
	Saturated          string   `json:"saturated"`                // SatNone, SatClient, ...
	BusyPollPerQuery   float64  `json:"busy_poll_per_query"`
	NetRxPerQuery      float64  `json:"net_rx_per_query"`
	CyclesPerQuery     *float64 `json:"cycles_per_query"` // null: no hardware counters
	InstructionsPerQry *float64 `json:"instructions_per_query"`

	Disturbed string `json:"disturbed,omitempty"` // why the machine disturbed the run
	Skipped   string `json:"skipped,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Run executes the matrix on a fresh testbed and returns every record.
// The testbed is always torn down, also on error.
func Run(ctx context.Context, o Options) (recs []Record, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	tmp, err := os.MkdirTemp("", "gocached-scenarios-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := buildBinaries(ctx, &o, tmp, logf); err != nil {
		return nil, err
	}
	if err := testbed.Sweep(); err != nil {
		logf("sweeping stale testbeds: %v", err)
	}
	bed, err := testbed.NewVariant("", o.variant())
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := bed.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("testbed teardown: %w", cerr))
		}
	}()
	logf("testbed %s (%s): server %s in %s, client in %s", bed.Name, bed.Variant, bed.ServerIP, bed.ServerNS, bed.ClientNS)
	hwErr := HWCountersAvailable()
	if hwErr != nil {
		logf("cycles/instructions per query: n/a (%v)", hwErr)
	}
	pollMode := false
	if hasGocached(o.Servers) {
		pollMode = gocachedHasPollMode(o.GocachedBin)
		if !pollMode {
			logf("gocached has no --poll-mode yet: only its base scenario runs")
		}
	}
	serverCPUs, _ := cpuset.Parse(o.ServerCPUs) // Validate checked both lists
	clientCPUs, _ := cpuset.Parse(o.ClientCPUs)
	r := &runner{o: &o, bed: bed, hw: hwErr == nil, pollMode: pollMode, logf: logf,
		serverCPUs: serverCPUs, clientCPUs: clientCPUs}
	return r.interleaved(ctx)
}

func hasGocached(servers []string) bool {
	for _, s := range servers {
		if s == Gocached {
			return true
		}
	}
	return false
}

// buildBinaries builds what o does not name; the current directory must
// be inside the gocached module.
func buildBinaries(ctx context.Context, o *Options, dir string, logf func(string, ...any)) error {
	build := func(dst *string, pkg, name string) error {
		if *dst != "" {
			return nil
		}
		*dst = filepath.Join(dir, name)
		logf("building %s", pkg)
		return testproc.GoBuild(ctx, pkg, *dst)
	}
	if err := build(&o.MCLoadBin, "github.com/gocached/gocached/bench/cmd/mcload", "mcload"); err != nil {
		return err
	}
	if slices.Contains(o.Servers, Memcached) {
		if o.MemcachedBin == "" {
			logf("building memcached %s from Debian's source package (once; cached)", refmc.Current.Version)
			bin, err := refmc.Current.Binary(ctx)
			if err != nil {
				return err
			}
			o.MemcachedBin = bin
		}
		out, err := testproc.CommandContext(ctx, o.MemcachedBin, "-V").Output()
		if err != nil {
			return fmt.Errorf("%s -V: %w", o.MemcachedBin, err)
		}
		o.MemcachedVersion = strings.TrimSpace(string(out))
	}
	if hasGocached(o.Servers) {
		return build(&o.GocachedBin, "github.com/gocached/gocached/cmd/gocached", "gocached")
	}
	return nil
}

type runner struct {
	o                      *Options
	bed                    *testbed.Bed
	hw                     bool
	pollMode               bool
	logf                   func(string, ...any)
	serverCPUs, clientCPUs []int
}

// measure runs mcload once at load and samples the counters over the
// measured part of its run.
func (r *runner) measure(ctx context.Context, srv *testproc.Proc, server, sc string, load Load, maxQPS float64, run int) Record {
	rec := Record{Server: server, Scenario: sc, Load: load.String(), Run: run}
	args := []string{"--noload"}
	switch {
	case load.IsMax():
		// The same connections and depth as the fixed loads, so that a
		// percentage of MAX is a rate this shape can carry.
		args = append(args, "-q", "0", "-d", strconv.Itoa(r.o.Depth))
	case load.Fraction > 0:
		if maxQPS <= 0 {
			rec.Error = "no MAX rate to take a share of"
			return rec
		}
		rec.OfferedQPS = load.Fraction * maxQPS
	default:
		rec.OfferedQPS = load.QPS
	}
	if rec.OfferedQPS > 0 {
		args = append(args, "-q", strconv.FormatFloat(rec.OfferedQPS, 'f', 0, 64), "-d", strconv.Itoa(r.o.Depth))
	}
	var hw *hwCounters
	sample := func(clientPID int) (counters, error) {
		c, err := readCounters(r.bed.ServerNS, srv.Pid(), clientPID, r.bed.ServerKthreads, r.bed.ClientKthreads)
		c.reactors = r.reactorStats(ctx, srv, server)
		return c, err
	}
	var before, after counters
	var sampleErr error
	var cyc0, ins0, cyc1, ins1 uint64
	res, err := r.mcloadSampled(ctx, srv, args, func(pid int) {
		// Sample inside the measured window, away from its edges.
		if r.hw {
			if h, err := openHWCounters(srv.Pid()); err == nil {
				hw = h
			}
		}
		edge := min(100*time.Millisecond, r.o.Time/10)
		if bench.SleepCtx(ctx, r.o.Warmup+edge) != nil {
			return
		}
		before, sampleErr = sample(pid)
		if hw != nil {
			cyc0, ins0, _ = hw.read()
		}
		if bench.SleepCtx(ctx, r.o.Time-2*edge) != nil {
			return
		}
		if sampleErr == nil {
			after, sampleErr = sample(pid)
		}
		if hw != nil {
			cyc1, ins1, _ = hw.read()
			hw.close()
		}
	})
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.Result = res
	if sampleErr != nil || after.at.IsZero() {
		rec.Error = fmt.Sprintf("counters: %v", sampleErr)
		return rec
	}
	rec.Usage = usage(before, after, r.serverCPUs, r.clientCPUs)
	m, _ := napi.ParseMode(sc)
	rec.Saturated = classify(rec.Usage.ServerCoreBusy, rec.Usage.ClientCoreBusy, server == Gocached && m.BusyPolls())
	if res.QPS > 0 {
		rec.CPUNsPerQuery = rec.Usage.ServerCPUPct / 100 * 1e9 / res.QPS
		rec.CoreNsPerQuery = rec.Usage.ServerCoreCPUPct / 100 * 1e9 / res.QPS
		rec.ClientNsPerQuery = rec.Usage.ClientCPUPct / 100 * 1e9 / res.QPS
		rec.MachineNsPerQuery = rec.Usage.MachineCPUPct / 100 * 1e9 / res.QPS
		rec.BenchNsPerQuery = rec.Usage.BenchCPUPct / 100 * 1e9 / res.QPS
		rec.BusyPollPerQuery = rec.Usage.BusyPollPerSec / res.QPS
		rec.NetRxPerQuery = rec.Usage.NetRxPerSec / res.QPS
		if hw != nil && cyc1 > cyc0 {
			queries := res.QPS * rec.Usage.Seconds
			c, i := float64(cyc1-cyc0)/queries, float64(ins1-ins0)/queries
			rec.CyclesPerQuery, rec.InstructionsPerQry = &c, &i
		}
	}
	var why []string
	if rec.Usage.StealPct > r.o.MaxStealPct {
		why = append(why, fmt.Sprintf("steal %.1f%%", rec.Usage.StealPct))
	}
	if rec.Usage.OtherCPUPct > r.o.MaxOtherPct {
		why = append(why, fmt.Sprintf("other processes %.1f%%", rec.Usage.OtherCPUPct))
	}
	rec.Disturbed = strings.Join(why, ", ")
	return rec
}

// mcloadArgs is the load generator's command line shared by every run.
func (r *runner) mcloadArgs(srv *testproc.Proc, extra ...string) []string {
	o := r.o
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
	args := []string{"-c", o.ClientCPUs, o.MCLoadBin, "-s", srv.Addr(), "-t", secs(o.Time), "-w", secs(o.Warmup),
		"-c", strconv.Itoa(o.Conns), "-T", strconv.Itoa(o.LoadThreads),
		"-K", o.KeySize, "-V", o.ValueSize, "-i", o.IADist, "-r", strconv.Itoa(o.Records),
		"-u", strconv.FormatFloat(o.Update, 'f', -1, 64), "--json", "--quiet"}
	if o.MultiGet > 1 {
		args = append(args, "--multiget", strconv.Itoa(o.MultiGet))
	}
	return append(args, extra...)
}

// mcload runs the load generator to completion in the client namespace.
func (r *runner) mcload(ctx context.Context, srv *testproc.Proc, extra ...string) (*bench.Result, error) {
	return r.mcloadSampled(ctx, srv, extra, nil)
}

// mcloadSampled runs the load generator; during calls sample (with the
// generator's pid) while it runs.
func (r *runner) mcloadSampled(ctx context.Context, srv *testproc.Proc, extra []string, during func(pid int)) (*bench.Result, error) {
	// Bounded: the run, a preload of up to 5 minutes, and a margin.
	ctx, cancel := context.WithTimeout(ctx, r.o.Warmup+r.o.Time+6*time.Minute)
	defer cancel()
	cmd := r.bed.ClientCmd(ctx, "taskset", r.mcloadArgs(srv, extra...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mcload: %w", err)
	}
	if during != nil {
		during(cmd.Process.Pid)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("mcload: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res bench.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("mcload output: %w", err)
	}
	return &res, nil
}

// summary is the one-line log of a record.
func (rec Record) summary() string {
	switch {
	case rec.Error != "":
		return "error: " + rec.Error
	case rec.Result == nil:
		return "no result"
	}
	s := fmt.Sprintf("%.0f qps, avg %.0fµs p99 %.0fµs, server %.0f%% cli %.0f%%, ns/q srv %.0f cli %.0f bench %.0f machine %.0f, cores srv %.0f%% cli %.0f%% sat %s, steal %.1f%%",
		rec.Result.QPS, rec.Result.Latency.Avg, rec.Result.Latency.P99, rec.Usage.ServerCPUPct, rec.Usage.ClientCPUPct,
		rec.CPUNsPerQuery, rec.ClientNsPerQuery, rec.BenchNsPerQuery, rec.MachineNsPerQuery, rec.Usage.ServerCoreBusy, rec.Usage.ClientCoreBusy,
		rec.Saturated, rec.Usage.StealPct)
	if rec.Disturbed != "" {
		s += " [disturbed: " + rec.Disturbed + "]"
	}
	return s
}
