package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// maxProcs bounds the GOMAXPROCS the open loop asks for.
const maxProcs = 256

// Run preloads the key space (unless NoLoad), then drives the server for
// Warmup+Time and reports the measured interval. Every phase is bounded in
// time: LoadTimeout for the preload, Warmup+Time+DrainTimeout for the load.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	ks, err := NewKeySpace(cfg.Records, cfg.KeySize)
	if err != nil {
		return nil, err
	}
	res := &Result{Server: cfg.Server, TargetQPS: cfg.QPS, Connections: cfg.conns(), Threads: cfg.Threads, Depth: cfg.Depth}
	if !cfg.NoLoad {
		lr, err := preload(ctx, &cfg, ks)
		res.Load = &lr
		if err != nil {
			return res, err
		}
	}
	if cfg.LoadOnly {
		return res, nil
	}
	var err2 error
	switch cfg.engine() {
	case EngineEpoll:
		err2 = runEpoll(ctx, &cfg, ks, res)
	default:
		err2 = runGoroutines(ctx, &cfg, ks, res)
	}
	if err2 != nil {
		return res, err2
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// runGoroutines is the portable engine: a reader goroutine per connection,
// and a pacer per connection (open loop) or a sender (closed loop).
func runGoroutines(ctx context.Context, cfgp *Config, ks *KeySpace, res *Result) error {
	cfg := *cfgp
	// A pacer in nanosleep keeps its P until sysmon retakes it (up to
	// 10 ms later), so the open loop gets a P per pacer plus one for the
	// readers; beyond maxProcs connections pacing gets coarser.
	if prev, want := runtime.GOMAXPROCS(0), min(cfg.conns()+1, maxProcs); cfg.QPS > 0 && prev < want {
		runtime.GOMAXPROCS(want)
		defer runtime.GOMAXPROCS(prev)
	}

	conns := make([]*conn, 0, cfg.conns())
	defer func() {
		for _, c := range conns {
			c.nc.Close()
		}
	}()
	for i := range cfg.conns() {
		c, err := dialConn(&cfg, ks, cfg.Seed, i)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	var pacers []*pacer
	if cfg.QPS > 0 {
		meanGap := float64(time.Second) * float64(cfg.conns()) / cfg.QPS
		ia, err := ScaleToMean(cfg.InterArrival, meanGap)
		if err != nil {
			return fmt.Errorf("inter-arrival: %w", err)
		}
		for _, c := range conns {
			pacers = append(pacers, &pacer{c: c, ia: ia, spin: cfg.Spin, lag: newLatencyHistogram()})
		}
	}

	clk := clock{base: time.Now()}
	win := window{start: int64(cfg.Warmup), end: int64(cfg.Warmup + cfg.Time)}
	var readers, writers sync.WaitGroup
	writeDeadline := clk.base.Add(time.Duration(win.end) + cfg.DrainTimeout)
	for _, c := range conns {
		c.win = win
		// A stalled server must not hold a writer past the run.
		_ = c.nc.SetWriteDeadline(writeDeadline)
		readers.Add(1)
		go func() { defer readers.Done(); c.readLoop(clk, win) }()
	}
	stopCancel := context.AfterFunc(ctx, func() {
		for _, c := range conns {
			c.fail(fmt.Errorf("cancelled: %w", context.Cause(ctx)))
		}
	})
	defer stopCancel()
	if pacers != nil {
		for _, p := range pacers {
			writers.Add(1)
			go func() { defer writers.Done(); p.run(clk, win, cfg.DrainTimeout) }()
		}
	} else {
		for _, c := range conns {
			writers.Add(1)
			go func() { defer writers.Done(); closedLoop(c, clk, win, cfg.DrainTimeout) }()
		}
	}
	stopProgress := startProgress(&cfg, func() int64 {
		var n int64
		for _, c := range conns {
			n += c.received.Load()
		}
		return n
	}, clk, win)
	writers.Wait()
	readers.Wait()
	stopProgress()
	outs := make([]outcome, len(conns))
	for i, c := range conns {
		outs[i] = outcome{stats: &c.stats, sent: c.sent.Load(), received: c.received.Load(), scheduled: c.scheduled, err: c.failure()}
	}
	var lags []*hdrhistogram.Histogram
	var unsent int64
	for _, p := range pacers {
		lags = append(lags, p.lag)
		unsent += p.unsent
	}
	res.collect(outs, lags, unsent, cfg.Time)
	return nil
}
