//go:build linux

package enginecmp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gocached/gocached/bench"
	"github.com/gocached/gocached/bench/scenario"
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
	var recs []Record
	for run := 1; run <= o.Runs; run++ {
		for _, sh := range o.Shapes {
			for i := range o.Targets {
				if ctx.Err() != nil {
					return recs, ctx.Err()
				}
				target := o.Targets[(i+run-1)%len(o.Targets)]
				prof := ""
				if target != Memcached {
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
		if err := srv.stop(); err != nil && rec.Error == "" {
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
	if _, err := mcload(ctx, o, srv.addr, "--loadonly"); err != nil {
		rec.Error = "preload: " + err.Error()
		return rec
	}
	u0, s0, err := scenario.ProcessTimes(srv.pid())
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	sys0, err := scenario.ReadSystemCPU()
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	start := time.Now()
	res, err := mcload(ctx, o, srv.addr, "--noload", "-w", "0",
		"-t", strconv.FormatFloat(o.Time.Seconds(), 'f', -1, 64),
		"-T", "1", "-c", strconv.Itoa(sh.Conns), "-d", strconv.Itoa(sh.Depth),
		"-u", strconv.FormatFloat(o.Update, 'f', -1, 64))
	elapsed := time.Since(start).Seconds()
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	u1, s1, err := scenario.ProcessTimes(srv.pid())
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	sys1, err := scenario.ReadSystemCPU()
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.Result = res
	fill(&rec, u1-u0, s1-s0, elapsed, sys1.Sub(sys0))
	if res.Errors > 0 {
		rec.Error = fmt.Sprintf("%d errors", res.Errors)
	}
	return rec
}

// fill derives the per-request costs from tick deltas over elapsed seconds.
func fill(rec *Record, uticks, sticks uint64, elapsed float64, sys scenario.SystemCPU) {
	ns := func(ticks uint64) float64 { return float64(ticks) * 1e9 / scenario.UserHZ }
	if elapsed > 0 {
		rec.ServerCPUPct = 100 * float64(uticks+sticks) / scenario.UserHZ / elapsed
	}
	if n := rec.Result.Requests; n > 0 {
		rec.NsPerReq = ns(uticks+sticks) / float64(n)
		rec.UserNsPerReq = ns(uticks) / float64(n)
		rec.SysNsPerReq = ns(sticks) / float64(n)
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

// server is one running target.
type server struct {
	cmd    *exec.Cmd
	out    *bytes.Buffer
	addr   string
	exited chan struct{}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop ends the server we started, by its pid: SIGTERM, so that gocached
// finishes its CPU profile, and SIGKILL if it has not exited in 10 s.
func (s *server) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
	return fmt.Errorf("server did not exit within 10 s of SIGTERM")
}

// freePort asks the kernel for a loopback port nobody holds right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverCommand is the target's command line, pinned with taskset (which
// execs the server, so the command's pid is the server's).
func serverCommand(o *Options, target string, port int, prof string) []string {
	cpu := strconv.Itoa(o.ServerCPU)
	common := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "1024", "-c", "8192", "-t", "1"}
	if target == Memcached {
		// memcached refuses to run as root without -u.
		return append([]string{"-c", cpu, o.MemcachedBin}, append(common, "-u", "nobody")...)
	}
	args := append([]string{"-c", cpu, o.GocachedBin, "--engine", target}, common...)
	if prof != "" {
		args = append(args, "--cpuprofile", prof)
	}
	return args
}

func startServer(ctx context.Context, o *Options, target, prof string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "taskset", serverCommand(o, target, port, prof)...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", target, err)
	}
	s := &server{cmd: cmd, out: out, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp4", s.addr, 500*time.Millisecond)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("%s exited at start: %s", target, strings.TrimSpace(out.String()))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.stop()
			return nil, errors.Join(fmt.Errorf("%s not accepting on %s after 10s", target, s.addr), err)
		}
	}
}
