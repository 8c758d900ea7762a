//go:build linux

package mutilatecmp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/bench/scenario"
	"github.com/gocached/gocached/internal/testproc"
)

// peakAttempts bounds the closed-loop runs: at most this many per clean
// run wanted.
const peakAttempts = 4

// Run measures the peak (unless o.Peak is given), then every (round, load,
// target), the targets' order rotating from round to round. It returns
// what it measured even when it stops early.
func Run(ctx context.Context, o Options) (Peak, []Record, error) {
	if err := o.Validate(); err != nil {
		return Peak{}, nil, err
	}
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir, err := os.MkdirTemp("", "mutilatecmp-")
	if err != nil {
		return Peak{}, nil, err
	}
	defer os.RemoveAll(dir)

	peak := Peak{QPS: o.Peak, Given: o.Peak > 0}
	if !peak.Given {
		// A disturbed closed loop understates the peak, and every load
		// scales with it: retry, boundedly, until PeakRuns are clean.
		for i, clean := 1, 0; clean < o.PeakRuns && i <= peakAttempts*o.PeakRuns; i++ {
			rec := measure(ctx, &o, Memcached, 0, 0, i, "")
			logf("peak run %d, %s closed loop: %s", i, Memcached, rec.summary())
			peak.Runs = append(peak.Runs, rec)
			if ctx.Err() != nil {
				return peak, nil, ctx.Err()
			}
			if rec.Error == "" && rec.Disturbed == "" {
				clean++
			}
		}
		if err := peak.settle(); err != nil {
			return peak, nil, err
		}
		logf("peak: %.0f req/s (median of %d clean runs of %d), memcached at %.0f %% of its CPU", peak.QPS, peak.Used, len(peak.Runs), peak.ServerCPUPct)
	}
	var recs []Record
	for round := 1; round <= o.Rounds; round++ {
		for _, load := range o.Loads {
			for i := range o.Targets {
				if ctx.Err() != nil {
					return peak, recs, ctx.Err()
				}
				target := o.Targets[(i+round-1)%len(o.Targets)]
				samples := filepath.Join(dir, fmt.Sprintf("%s-%g-%d.samples", target, load, round))
				rec := measure(ctx, &o, target, load, TargetQPS(peak.QPS, load), round, samples)
				os.Remove(samples)
				logf("round %d, %s of peak, %s: %s", round, LoadName(load), target, rec.summary())
				recs = append(recs, rec)
			}
		}
	}
	return peak, recs, nil
}

// measure starts a fresh target, loads the records, and runs mutilate once
// at qps (0: closed loop). With samples set the gets' latencies are saved
// there and their exact percentiles taken.
func measure(ctx context.Context, o *Options, target string, load float64, qps, round int, samples string) (rec Record) {
	rec = Record{Target: target, Load: load, TargetQPS: qps, Round: round}
	if o.QuietWait > 0 {
		waited, err := awaitQuiet(ctx, o.MaxOtherPct, o.QuietWait)
		if err != nil {
			rec.Error = err.Error()
			return rec
		}
		rec.QuietWaitS = waited.Seconds()
	}
	srv, err := testproc.StartOnFreePort(ctx, serverSpec(o, target))
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	defer func() {
		if err := srv.Stop(0); err != nil && rec.Error == "" {
			rec.Error = err.Error()
		}
	}()
	if _, _, err := mutilate(ctx, o, srv.Addr(), o.LoadArgs()); err != nil {
		rec.Error = "load: " + err.Error()
		return rec
	}
	before, err := sampleUsage(srv.Pid())
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	out, clientCPU, err := mutilate(ctx, o, srv.Addr(), o.Args(qps, samples))
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	after, err := sampleUsage(srv.Pid())
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.usage(before, after, clientCPU)
	if rec.Report, err = ParseReport(out); err != nil {
		rec.Error = err.Error()
		return rec
	}
	if samples != "" {
		if err := rec.takeSamples(samples); err != nil {
			rec.Error = err.Error()
		}
	}
	rec.Disturbed = o.disturbed(rec)
	return rec
}

// usageSample is the server's CPU and the machine's at one moment.
type usageSample struct {
	runNs uint64 // the server's exact run time
	ticks uint64 // the server's sampled utime + stime
	sys   scenario.SystemCPU
	at    time.Time
}

func sampleUsage(pid int) (usageSample, error) {
	s := usageSample{at: time.Now()}
	u, st, err1 := scenario.ProcessTimes(pid)
	run, err2 := scenario.RuntimeNs(pid)
	sys, err3 := scenario.ReadSystemCPU()
	s.runNs, s.ticks, s.sys = run, u+st, sys
	return s, firstErr(err1, err2, err3)
}

// usage fills the run's CPU shares: the server's exact run time, the
// machine's steal, and the CPU of processes other than the server and
// mutilate (the other tenants of a shared machine), from sampled ticks
// on both sides so that they compare.
func (r *Record) usage(a, b usageSample, client time.Duration) {
	if secs := b.at.Sub(a.at).Seconds(); secs > 0 {
		r.ServerCPUPct = 100 * float64(b.runNs-a.runNs) / 1e9 / secs
		r.ClientCPUPct = 100 * client.Seconds() / secs
	}
	d := b.sys.Sub(a.sys)
	total := float64(d.Total())
	if total <= 0 {
		return
	}
	r.StealPct = 100 * float64(d.Steal) / total
	own := float64(b.ticks-a.ticks) + client.Seconds()*scenario.UserHZ
	r.OtherCPUPct = 100 * max(0, float64(d.User+d.Nice+d.System)-own) / total
}

func (r *Record) takeSamples(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	lat, err := ParseSamples(f)
	if err != nil {
		return err
	}
	if len(lat) == 0 {
		return fmt.Errorf("mutilate saved no samples")
	}
	r.Gets = len(lat)
	r.P50Us, r.P99Us, r.P999Us = Percentile(lat, 50), Percentile(lat, 99), Percentile(lat, 99.9)
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// mutilate runs mutilate pinned to the client CPU (taskset execs it, so
// the process started is mutilate) and returns its standard output and
// the CPU time it used.
func mutilate(ctx context.Context, o *Options, addr string, args []string) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, o.runBound())
	defer cancel()
	argv := append([]string{"-c", strconv.Itoa(o.ClientCPU), o.MutilateBin, "-s", addr}, args...)
	cmd := testproc.CommandContext(ctx, "taskset", argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("mutilate %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// serverSpec: one thread (memcached -t 1, gocached's one reactor) pinned to
// the server CPU, the same memory and connection limit for every target.
func serverSpec(o *Options, target string) testproc.Spec {
	common := []string{"-l", "127.0.0.1", "-U", "0", "-m", strconv.Itoa(o.MemoryMB), "-c", "4096", "-t", "1"}
	var sp testproc.Spec
	if target == Memcached {
		sp = testproc.Memcached(o.MemcachedBin, common...)
	} else {
		sp = testproc.Gocached(o.GocachedBin, target, common...)
	}
	sp.Wrap = []string{"taskset", "-c", strconv.Itoa(o.ServerCPU)}
	return sp
}

// awaitQuiet waits, at most maxWait, for a second in which the machine's
// busy CPU (nothing of the benchmark runs now) stays under maxBusyPct: a
// run started while another tenant computes measures that tenant. It
// returns how long it waited; a machine that stays busy is run on anyway,
// and the run's own reading flags it.
func awaitQuiet(ctx context.Context, maxBusyPct float64, maxWait time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		a, err := scenario.ReadSystemCPU()
		if err != nil {
			return 0, err
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Since(start), ctx.Err()
		case <-t.C:
		}
		b, err := scenario.ReadSystemCPU()
		if err != nil {
			return 0, err
		}
		d := b.Sub(a)
		quiet := d.Total() == 0 || 100*float64(d.Busy())/float64(d.Total()) <= maxBusyPct
		if waited := time.Since(start); quiet || waited >= maxWait {
			return waited, nil
		}
	}
}
