package flash

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gocached/gocached/bench"
	"github.com/gocached/gocached/bench/scenario"
	"github.com/gocached/gocached/internal/testproc"
)

// Run measures every target once per round, rotating the order from round
// to round so that drift in the machine lands on every target alike.
func Run(ctx context.Context, o Options) ([]Record, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	w, err := newWorkload(&o)
	if err != nil {
		return nil, err
	}
	o.Log("workload: %d records, %.0f MB of values (%.1f x -m %d), zipf %.2f; a cache of -m holding the most popular keys would hit %.0f %% of gets",
		len(w.sizes), float64(w.bytes)/(1<<20), float64(w.bytes)/float64(o.MemoryMB<<20), o.MemoryMB, o.ZipfS, 100*w.ramBound(o.MemoryMB))
	var recs []Record
	for round := 1; round <= o.Rounds; round++ {
		for i := range o.Targets {
			if err := ctx.Err(); err != nil {
				return recs, err
			}
			target := o.Targets[(i+round-1)%len(o.Targets)]
			rec := measure(ctx, &o, w, target, round)
			o.Log("round %d %s: %s", round, target, rec.summary())
			recs = append(recs, rec)
		}
	}
	return recs, nil
}

// workload is what every run writes and reads.
type workload struct {
	ks    *bench.KeySpace
	sizes []int
	bytes int64
	zipf  *Zipf
	min   int
}

func newWorkload(o *Options) (*workload, error) {
	d, err := bench.ParseDistribution(o.ValueSize)
	if err != nil {
		return nil, err
	}
	n := int(o.WorkingSet * float64(o.MemoryMB<<20) / d.Mean())
	w := &workload{sizes: make([]int, n), min: bench.MaxValueLen}
	if w.ks, err = bench.NewKeySpace(n, bench.Fixed{Value: float64(o.KeySize)}); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5153))
	for i := range w.sizes {
		w.sizes[i] = max(int(bench.Sample(d, rng)), 1)
		w.bytes += int64(w.sizes[i])
		w.min = min(w.min, w.sizes[i])
	}
	if w.zipf, err = NewZipf(n, o.ZipfS); err != nil {
		return nil, err
	}
	return w, nil
}

// ramBound is the hit ratio of a cache that keeps the most popular records
// whose values fit in memMB: what a server without a flash tier can reach at
// best (item overhead ignored).
func (w *workload) ramBound(memMB int) float64 {
	left := int64(memMB) << 20
	r := 0
	for ; r < len(w.sizes); r++ {
		left -= int64(w.sizes[w.zipf.Record(r)])
		if left < 0 {
			break
		}
	}
	return w.zipf.Mass(r)
}

func (r Record) summary() string {
	if r.Error != "" {
		return "error: " + r.Error
	}
	s := fmt.Sprintf("hit %.1f %% (flash %.1f %% of hits), %.0f gets/s, p99 %.0f µs (ram %.0f, flash %.0f), %.0f ns/req, rss %.0f MB, "+
		"steal %.1f %%, other processes %.1f %%, server CPU busy outside the server %.1f %%, ext file %.0f MB written, %.0f MB of it in the page cache",
		100*r.HitRatio(), 100*r.FlashShare(), r.QPS, r.All.P99, r.RAM.P99, r.Flash.P99, r.NsPerReq, float64(r.RSS)/(1<<20),
		r.StealPct, r.OtherProcsPct, r.OutsidePct, float64(r.ExtFileBytes)/(1<<20), float64(r.ExtCachedBytes)/(1<<20))
	if r.Disturbed != "" {
		s += " [disturbed: " + r.Disturbed + "]"
	}
	return s
}

// measure runs one target through the phases: start, write, settle (drop
// the file's cached pages), warm up, census, measure, tagged gets, stop.
// The ext_path file lives in a fresh directory removed at the end.
func measure(ctx context.Context, o *Options, w *workload, target string, round int) (rec Record) {
	rec = Record{Target: target, Round: round, Records: len(w.sizes)}
	dir, err := os.MkdirTemp(o.Dir, "flashcmp-")
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	defer os.RemoveAll(dir)
	extFile := filepath.Join(dir, "extstore")
	sp := testproc.Spec{Name: target, Path: o.MemcachedBin, Args: o.serverArgs(extFile)}
	if target == Gocached {
		sp = testproc.Gocached(o.GocachedBin, o.Engine, o.serverArgs(extFile)...)
	}
	sp.Wrap = []string{"taskset", "-c", strconv.Itoa(o.ServerCPU)}
	srv, err := testproc.StartOnFreePort(ctx, sp)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	defer func() {
		if err := srv.Stop(0); err != nil && rec.Error == "" {
			rec.Error = err.Error()
		}
	}()
	if err := phases(ctx, o, w, srv, extFile, &rec); err != nil {
		rec.Error = err.Error()
	}
	return rec
}

func phases(ctx context.Context, o *Options, w *workload, srv *testproc.Proc, extFile string, rec *Record) error {
	addr := srv.Addr()
	loadBound := 2 * time.Minute
	if o.LoadMBps > 0 {
		loadBound += time.Duration(2 * float64(w.bytes) / (o.LoadMBps * (1 << 20)) * float64(time.Second))
	}
	var err error
	if rec.Load, err = writeAll(ctx, addr, w.ks, w.sizes, o.LoadMBps*(1<<20), time.Now().Add(loadBound)); err != nil {
		return err
	}
	poll := func() (int64, bool, error) {
		s, err := readStats(addr)
		if err != nil {
			return 0, false, err
		}
		n, ok := s.Int(statObjectsWritten)
		return n, ok, nil
	}
	if rec.Settle, err = o.Settle.Wait(ctx, poll, time.Now, bench.SleepCtx); err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	rec.FlashTier = !rec.Settle.NoFlash
	if o.DropCache {
		if err := dropFileCache(extFile); err != nil {
			return err
		}
	}
	if o.Warmup > 0 {
		if _, err := runGets(ctx, addr, w.ks, w.sizes, w.zipf, GetPhase{Conns: o.Conns, Requests: o.Requests, Time: o.Warmup, Seed: o.Seed + 1, Fill: o.Fill}); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	where, header, err := classify(ctx, addr, w.ks, w.min, time.Now().Add(2*time.Minute))
	if err != nil {
		return err
	}
	rec.Census = census(where)
	before, err := readStats(addr)
	if err != nil {
		return err
	}
	cpu0, err := sampleCPU(srv.Pid(), o.ServerCPU)
	if err != nil {
		return err
	}
	t, err := runGets(ctx, addr, w.ks, w.sizes, w.zipf, GetPhase{Conns: o.Conns, Requests: o.Requests, Time: o.Time, Seed: o.Seed + 2, Fill: o.Fill})
	if err != nil {
		return err
	}
	cpu1, err := sampleCPU(srv.Pid(), o.ServerCPU)
	if err != nil {
		return err
	}
	after, err := readStats(addr)
	if err != nil {
		return err
	}
	rec.fillClient(t)
	rec.fillServer(before, after)
	rec.fillCPU(cpuDelta{runNs: cpu1.runNs - cpu0.runNs, seconds: cpu1.at.Sub(cpu0.at).Seconds(),
		all: cpu1.all.Sub(cpu0.all), core: cpu1.core.Sub(cpu0.core), ownTicks: cpu1.ownTicks - cpu0.ownTicks})
	rec.judge(o.MaxStealPct, o.MaxOtherPct)
	if o.TaggedTime > 0 {
		tt, err := runGets(ctx, addr, w.ks, w.sizes, w.zipf, GetPhase{Conns: o.Conns, Requests: o.Requests, Time: o.TaggedTime, Seed: o.Seed + 3, Tag: header, Fill: o.Fill})
		if err != nil {
			return fmt.Errorf("tagged phase: %w", err)
		}
		end, err := readStats(addr)
		if err != nil {
			return err
		}
		rec.fillTagged(tt, after, end)
	}
	mem, err := srv.Memory()
	if err != nil {
		return err
	}
	rec.RSS, rec.PeakRSS = mem.Current, mem.Peak
	rec.ExtFileBytes = fileBlocks(extFile)
	if rec.ExtCachedBytes, err = fileCached(extFile); err != nil {
		return err
	}
	if rec.Errors > 0 {
		return fmt.Errorf("%d bad replies, first: %s", rec.Errors, rec.FirstError)
	}
	return nil
}

// cpuSample is the server's exact run time and the machine's ticks.
type cpuSample struct {
	at       time.Time
	runNs    uint64
	ownTicks uint64 // the server's and this process's utime+stime
	all      scenario.SystemCPU
	core     scenario.SystemCPU // the server's CPU
}

func sampleCPU(pid, cpu int) (cpuSample, error) {
	ns, err := scenario.RuntimeNs(pid)
	if err != nil {
		return cpuSample{}, err
	}
	su, ss, err := scenario.ProcessTimes(pid)
	if err != nil {
		return cpuSample{}, err
	}
	cu, cs, err := scenario.ProcessTimes(os.Getpid())
	if err != nil {
		return cpuSample{}, err
	}
	all, per, err := scenario.ReadCPUs()
	return cpuSample{at: time.Now(), runNs: ns, ownTicks: su + ss + cu + cs, all: all, core: per[cpu]}, err
}
