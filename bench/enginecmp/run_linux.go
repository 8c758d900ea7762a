//go:build linux

package enginecmp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/bench"
	"github.com/gocached/gocached/bench/scenario"
	"github.com/gocached/gocached/internal/testproc"
	"github.com/gocached/gocached/kernel/testbed"
)

// Record is one measured run of one target under one shape.
type Record struct {
	Target string        `json:"target"`
	Shape  string        `json:"shape"`
	Run    int           `json:"run"`
	Result *bench.Result `json:"result,omitempty"`
	// Server CPU over the run: percent of one CPU and nanoseconds per
	// answered request, in total and split into user and kernel time.
	ServerCPUPct float64 `json:"server_cpu_pct"`
	NsPerReq     float64 `json:"ns_per_req"`
	UserNsPerReq float64 `json:"user_ns_per_req"`
	SysNsPerReq  float64 `json:"sys_ns_per_req"`
	StealPct     float64 `json:"steal_pct"` // of the whole machine
	// Profile splits a gocached server's CPU time (from its --cpuprofile);
	// nil for memcached.
	Profile *Split `json:"profile,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Run measures every (run, shape, target) in o, rotating the target order
// from run to run so that drift in the machine does not favour one target.
func Run(ctx context.Context, o Options) ([]Record, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	profDir, err := os.MkdirTemp("", "enginecmp-prof-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profDir)
	if o.Testbed != "" {
		v := testbed.Variant{Queues: 1}
		if o.Testbed == "threaded" {
			v.Threaded, v.ServerCPUs, v.ClientCPUs = true, strconv.Itoa(o.ServerCPU), strconv.Itoa(o.ClientCPU)
		}
		bed, err := testbed.NewVariant(testbed.UniqueName(), v)
		if err != nil {
			return nil, fmt.Errorf("testbed: %w", err)
		}
		defer bed.Close()
		o.bed = bed
		logf("testbed %s: %s, server %s in %s, client in %s", bed.Name, o.Testbed, bed.ServerIP, bed.ServerNS, bed.ClientNS)
	}
	var recs []Record
	for run := 1; run <= o.Runs; run++ {
		for _, sh := range o.Shapes {
			for i := range o.Targets {
				if ctx.Err() != nil {
					return recs, ctx.Err()
				}
				target := o.Targets[(i+run-1)%len(o.Targets)]
				prof := ""
				if IsGocached(target) {
					prof = filepath.Join(profDir, fmt.Sprintf("%s-%s-%d.pprof", target, sh, run))
				}
				rec := measure(ctx, &o, target, sh, run, prof)
				logf("run %d %s %s: %s", run, sh, target, rec.summary())
				recs = append(recs, rec)
			}
		}
	}
	return recs, nil
}

func (r Record) summary() string {
	if r.Error != "" {
		return "error: " + r.Error
	}
	s := fmt.Sprintf("%.0f req/s, p99 %.0fµs, server %.0f%% cpu, %.0f ns/req (user %.0f, kernel %.0f), steal %.0f%%",
		r.Result.QPS, r.Result.Latency.P99, r.ServerCPUPct, r.NsPerReq, r.UserNsPerReq, r.SysNsPerReq, r.StealPct)
	if p := r.Profile; p != nil {
		s += fmt.Sprintf(", profile: syscalls %.0f%% protocol %.0f%% engine %.0f%%", 100*p.Kernel, 100*p.Protocol, 100*p.Engine)
	}
	return s
}

// measure runs one cell. With prof set the gocached server writes a CPU
// profile there, read once the server has shut down.
func measure(ctx context.Context, o *Options, target string, sh Shape, run int, prof string) (rec Record) {
	rec = Record{Target: target, Shape: sh.String(), Run: run}
	srv, err := startServer(ctx, o, target, prof)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	defer func() {
		// SIGTERM, so that gocached finishes its CPU profile.
		if err := srv.Stop(0); err != nil && rec.Error == "" {
			rec.Error = err.Error()
		}
		if prof != "" && rec.Error == "" {
			split, err := SplitProfile(prof)
			if err != nil {
				rec.Error = err.Error()
				return
			}
			rec.Profile = &split
		}
	}()
	if _, err := mcload(ctx, o, srv.Addr(), "--loadonly"); err != nil {
		rec.Error = "preload: " + err.Error()
		return rec
	}
	before, err := sampleCPU(srv.Pid())
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	res, err := mcload(ctx, o, srv.Addr(), "--noload", "-w", "0",
		"-t", strconv.FormatFloat(o.Time.Seconds(), 'f', -1, 64),
		"-T", "1", "-c", strconv.Itoa(sh.Conns), "-d", strconv.Itoa(sh.Depth),
		"-u", strconv.FormatFloat(o.Update, 'f', -1, 64))
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	after, err := sampleCPU(srv.Pid())
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.Result = res
	fill(&rec, after.runNs-before.runNs, after.utime-before.utime, after.stime-before.stime, after.at.Sub(before.at).Seconds(), after.sys.Sub(before.sys))
	if res.Errors > 0 {
		rec.Error = fmt.Sprintf("%d errors", res.Errors)
	}
	return rec
}

// cpuSample is the server's CPU times and the machine's, at one moment.
type cpuSample struct {
	utime, stime uint64 // the server's, in clock ticks (sampled)
	runNs        uint64 // the server's exact run time
	sys          scenario.SystemCPU
	at           time.Time
}

// sampleCPU reads the CPU times of process pid and of the whole machine.
func sampleCPU(pid int) (cpuSample, error) {
	s := cpuSample{at: time.Now()}
	var err error
	if s.utime, s.stime, err = scenario.ProcessTimes(pid); err != nil {
		return s, err
	}
	if s.runNs, err = scenario.RuntimeNs(pid); err != nil {
		return s, err
	}
	if s.sys, err = scenario.ReadSystemCPU(); err != nil {
		return s, err
	}
	return s, nil
}

// fill derives the per-request costs over elapsed seconds from the exact
// run time (runNs), split into user and system in the proportion of the
// sampled ticks: the kernel samples utime/stime by the tick, which misses
// short bursts of a server that sleeps between requests (scenario's
// runtime.go), so only the total is taken from the scheduler's clock.
func fill(rec *Record, runNs, uticks, sticks uint64, elapsed float64, sys scenario.SystemCPU) {
	if elapsed > 0 {
		rec.ServerCPUPct = 100 * float64(runNs) / 1e9 / elapsed
	}
	if n := rec.Result.Requests; n > 0 {
		rec.NsPerReq = float64(runNs) / float64(n)
		userShare := 0.0
		if uticks+sticks > 0 {
			userShare = float64(uticks) / float64(uticks+sticks)
		}
		rec.UserNsPerReq = rec.NsPerReq * userShare
		rec.SysNsPerReq = rec.NsPerReq - rec.UserNsPerReq
	}
	if t := sys.Total(); t > 0 {
		rec.StealPct = 100 * float64(sys.Steal) / float64(t)
	}
}

// mcload runs the load generator on the client CPU to completion. Bounded:
// the run plus a generous margin for the preload.
func mcload(ctx context.Context, o *Options, addr string, extra ...string) (*bench.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Time+2*time.Minute)
	defer cancel()
	args := append([]string{"-c", strconv.Itoa(o.ClientCPU), o.MCLoadBin, "-s", addr,
		"-r", strconv.Itoa(o.Records), "-K", o.KeySize, "-V", o.ValueSize, "--json", "--quiet"}, extra...)
	cmd := exec.CommandContext(ctx, "taskset", args...)
	if o.bed != nil {
		cmd = testbed.NSCmd(ctx, o.bed.ClientNS, "taskset", args...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("mcload: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res bench.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("mcload output %.100q: %w", stdout.String(), err)
	}
	return &res, nil
}

// serverSpec is the target's command line, pinned with taskset (which execs
// the server, so the process we measure is the server). The port is added
// by testproc.StartOnFreePort.
func serverSpec(o *Options, target string, prof string) testproc.Spec {
	host := "127.0.0.1"
	if o.bed != nil {
		host = o.bed.ServerIP
	}
	common := []string{"-l", host, "-U", "0", "-m", "1024", "-c", "8192", "-t", "1"}
	var sp testproc.Spec
	switch target {
	case Memcached:
		sp = testproc.Memcached(o.MemcachedBin, common...)
	case Memcached1618:
		sp = testproc.Memcached(o.Memcached1618Bin, common...)
	case Floor:
		sp = testproc.Spec{Name: Floor, Path: o.FloorBin, Args: common}
	case UringFloor:
		sp = testproc.Spec{Name: UringFloor, Path: o.UringFloorBin, Args: common}
	default:
		bin := o.GocachedBin
		if IsAlt(target) {
			bin = o.GocachedAltBin
		}
		sp = testproc.Gocached(bin, Engine(target), common...)
		sp.Name = target
		if prof != "" {
			sp.Args = append(sp.Args, "--cpuprofile", prof)
		}
	}
	sp.Wrap = []string{"taskset", "-c", strconv.Itoa(o.ServerCPU)}
	return sp
}

func startServer(ctx context.Context, o *Options, target, prof string) (*testproc.Proc, error) {
	sp := serverSpec(o, target, prof)
	if o.bed == nil {
		return testproc.StartOnFreePort(ctx, sp)
	}
	// The bed's addresses exist only inside its namespaces: any port is
	// free there, and readiness is probed from the client side.
	const port = "11311"
	sp.NetNS = o.bed.ServerNS
	sp.Args = append(sp.Args, "-p", port)
	sp.Addr = net.JoinHostPort(o.bed.ServerIP, port)
	bed := o.bed
	sp.Dial = func(ctx context.Context, addr string) (c net.Conn, err error) {
		err = bed.InNS(bed.ClientNS, func() error {
			var d net.Dialer
			c, err = d.DialContext(ctx, "tcp", addr)
			return err
		})
		return c, err
	}
	return testproc.Start(ctx, sp)
}
