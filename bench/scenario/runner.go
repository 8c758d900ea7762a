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
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/bench"
	"github.com/gocached/gocached/internal/testproc"
	"github.com/gocached/gocached/kernel/testbed"
)

// Record is one measured run of one server, scenario and load.
type Record struct {
	Server     string        `json:"server"`
	Scenario   string        `json:"scenario"`
	Load       string        `json:"load"`        // as given: 10000, MAX, 50%
	OfferedQPS float64       `json:"offered_qps"` // the target rate; 0 = closed loop
	Run        int           `json:"run"`
	Result     *bench.Result `json:"result,omitempty"`
	Usage      Usage         `json:"usage"`

	CPUNsPerQuery      float64  `json:"cpu_ns_per_query"`
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
	bed, err := testbed.New("")
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := bed.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("testbed teardown: %w", cerr))
		}
	}()
	logf("testbed %s: server %s in %s, client in %s", bed.Name, bed.ServerIP, bed.ServerNS, bed.ClientNS)
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
	r := &runner{o: &o, bed: bed, hw: hwErr == nil, pollMode: pollMode, logf: logf}
	for _, server := range o.Servers {
		for _, sc := range o.Scenarios {
			if err := ctx.Err(); err != nil {
				return recs, err
			}
			recs = append(recs, r.scenario(ctx, server, sc)...)
		}
	}
	return recs, nil
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
	if hasGocached(o.Servers) {
		return build(&o.GocachedBin, "github.com/gocached/gocached/cmd/gocached", "gocached")
	}
	return nil
}

type runner struct {
	o        *Options
	bed      *testbed.Bed
	hw       bool
	pollMode bool
	logf     func(string, ...any)
}

// scenario starts server in scenario, preloads it, and runs every load.
func (r *runner) scenario(ctx context.Context, server, sc string) []Record {
	skip := func(why string) []Record {
		r.logf("%s %s: skipped: %s", server, sc, why)
		return []Record{{Server: server, Scenario: sc, Skipped: why}}
	}
	if ok, why := Supports(server, sc); !ok {
		return skip(why)
	}
	if server == Gocached && !r.pollMode && sc != "base" {
		return skip("gocached binary has no --poll-mode")
	}
	fail := func(err error) []Record {
		r.logf("%s %s: %v", server, sc, err)
		return []Record{{Server: server, Scenario: sc, Error: err.Error()}}
	}
	// memcached's deferX lives in the device knobs; everything else starts
	// from zeros so no earlier scenario leaks into this one.
	knobs := "base"
	if server == Memcached {
		knobs = sc
	}
	if err := setDeviceKnobs(ctx, r.bed, knobs); err != nil {
		return fail(err)
	}
	defer func() { _ = setDeviceKnobs(context.WithoutCancel(ctx), r.bed, "base") }()
	srv, err := startServer(ctx, r.bed, r.o, server, sc, r.pollMode)
	if err != nil {
		return fail(err)
	}
	defer func() {
		// SIGTERM: gocached restores the NAPI knobs it changed before it exits.
		if err := srv.Stop(0); err != nil {
			r.logf("%s %s: %v", server, sc, err)
		}
	}()
	if _, err := r.mcload(ctx, srv, "--loadonly"); err != nil {
		return fail(fmt.Errorf("preload: %w", err))
	}
	var recs []Record
	maxQPS := 0.0
	for _, load := range orderLoads(r.o.Loads) {
		for run := 1; run <= r.o.Runs; run++ {
			rec := r.measure(ctx, srv, server, sc, load, maxQPS, run)
			r.logf("%s %-10s %-6s run %d: %s", server, sc, load, run, rec.summary())
			recs = append(recs, rec)
		}
		if load.IsMax() {
			maxQPS = medianMaxQPS(recs)
		}
	}
	return recs
}

// medianMaxQPS is the median achieved rate of the MAX runs so far.
func medianMaxQPS(recs []Record) float64 {
	var qs []float64
	for _, r := range recs {
		if r.OfferedQPS == 0 && r.Result != nil {
			qs = append(qs, r.Result.QPS)
		}
	}
	return median(qs)
}

// measure runs mcload once at load and samples the counters over the
// measured part of its run.
func (r *runner) measure(ctx context.Context, srv *testproc.Proc, server, sc string, load Load, maxQPS float64, run int) Record {
	rec := Record{Server: server, Scenario: sc, Load: load.String(), Run: run}
	args := []string{"--noload"}
	switch {
	case load.IsMax():
		args = append(args, "-q", "0", "-d", strconv.Itoa(r.o.MaxDepth))
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
	sample := func(clientPID int) (counters, error) { return readCounters(r.bed.ServerNS, srv.Pid(), clientPID) }
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
		if !sleepCtx(ctx, r.o.Warmup+edge) {
			return
		}
		before, sampleErr = sample(pid)
		if hw != nil {
			cyc0, ins0, _ = hw.read()
		}
		if !sleepCtx(ctx, r.o.Time-2*edge) {
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
	rec.Usage = usage(before, after)
	if res.QPS > 0 {
		rec.CPUNsPerQuery = rec.Usage.ServerCPUPct / 100 * 1e9 / res.QPS
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

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// mcloadArgs is the load generator's command line shared by every run.
func (r *runner) mcloadArgs(srv *testproc.Proc, extra ...string) []string {
	o := r.o
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
	args := []string{"-c", o.ClientCPUs, o.MCLoadBin, "-s", srv.Addr(), "-t", secs(o.Time), "-w", secs(o.Warmup),
		"-c", strconv.Itoa(o.Conns), "-T", strconv.Itoa(o.LoadThreads),
		"-K", o.KeySize, "-V", o.ValueSize, "-i", o.IADist, "-r", strconv.Itoa(o.Records),
		"-u", strconv.FormatFloat(o.Update, 'f', -1, 64), "--json", "--quiet"}
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
	s := fmt.Sprintf("%.0f qps, avg %.0fµs p99 %.0fµs, server cpu %.0f%%, %.0f cpu-ns/q",
		rec.Result.QPS, rec.Result.Latency.Avg, rec.Result.Latency.P99, rec.Usage.ServerCPUPct, rec.CPUNsPerQuery)
	if rec.Disturbed != "" {
		s += " [disturbed: " + rec.Disturbed + "]"
	}
	return s
}
