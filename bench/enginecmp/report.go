package enginecmp

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/gocached/gocached/bench"
)

// Summary is the median of one target's runs under one shape.
type Summary struct {
	Target       string  `json:"target"`
	Shape        string  `json:"shape"`
	Runs         int     `json:"runs"` // runs without errors
	QPS          float64 `json:"qps"`
	QPSMin       float64 `json:"qps_min"`
	QPSMax       float64 `json:"qps_max"`
	P99us        float64 `json:"p99_us"`
	ServerCPUPct float64 `json:"server_cpu_pct"`
	NsPerReq     float64 `json:"ns_per_req"`
	UserNsPerReq float64 `json:"user_ns_per_req"`
	SysNsPerReq  float64 `json:"sys_ns_per_req"`
	StealPct     float64 `json:"steal_pct"`
	// Profile holds the medians of the runs' profile splits, when profiled.
	Profile *Split `json:"profile,omitempty"`
}

// Ratio compares the epoll engine with another target under one shape.
type Ratio struct {
	Shape   string  `json:"shape"`
	Against string  `json:"against"`
	QPS     float64 `json:"qps"`      // epoll req/s over the other's
	CPUCost float64 `json:"cpu_cost"` // the other's server CPU ns/req over epoll's
	// Ceiling is the CPU-cost ratio epoll would reach if its own engine
	// code cost nothing: the other's ns/req over epoll's ns/req without the
	// profile's engine share (kernel time and the shared protocol and store
	// remain). 0 when epoll was not profiled.
	Ceiling float64 `json:"ceiling"`
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Summarize takes the medians of the error-free records per (shape, target),
// in the order they first appear.
func Summarize(recs []Record) []Summary {
	type key struct{ shape, target string }
	var order []key
	groups := map[key][]Record{}
	for _, r := range recs {
		k := key{r.Shape, r.Target}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		if r.Error == "" && r.Result != nil {
			groups[k] = append(groups[k], r)
		} else if groups[k] == nil {
			groups[k] = []Record{}
		}
	}
	var out []Summary
	for _, k := range order {
		g := groups[k]
		pick := func(f func(Record) float64) []float64 {
			xs := make([]float64, len(g))
			for i, r := range g {
				xs[i] = f(r)
			}
			return xs
		}
		qps := pick(func(r Record) float64 { return r.Result.QPS })
		s := Summary{Target: k.target, Shape: k.shape, Runs: len(g), QPS: median(qps),
			P99us:        median(pick(func(r Record) float64 { return r.Result.Latency.P99 })),
			ServerCPUPct: median(pick(func(r Record) float64 { return r.ServerCPUPct })),
			NsPerReq:     median(pick(func(r Record) float64 { return r.NsPerReq })),
			UserNsPerReq: median(pick(func(r Record) float64 { return r.UserNsPerReq })),
			SysNsPerReq:  median(pick(func(r Record) float64 { return r.SysNsPerReq })),
			StealPct:     median(pick(func(r Record) float64 { return r.StealPct })),
		}
		if len(qps) > 0 {
			s.QPSMin, s.QPSMax = slices.Min(qps), slices.Max(qps)
		}
		var profiled []Record
		for _, r := range g {
			if r.Profile != nil {
				profiled = append(profiled, r)
			}
		}
		if len(profiled) > 0 {
			g = profiled
			s.Profile = &Split{
				Kernel:   median(pick(func(r Record) float64 { return r.Profile.Kernel })),
				Protocol: median(pick(func(r Record) float64 { return r.Profile.Protocol })),
				Engine:   median(pick(func(r Record) float64 { return r.Profile.Engine })),
			}
		}
		out = append(out, s)
	}
	return out
}

// Ratios compares epoll with every other target, shape by shape.
func Ratios(sums []Summary) []Ratio {
	var out []Ratio
	for _, e := range sums {
		if e.Target != Epoll || e.Runs == 0 {
			continue
		}
		for _, o := range sums {
			if o.Shape != e.Shape || o.Target == Epoll || o.Runs == 0 {
				continue
			}
			r := Ratio{Shape: e.Shape, Against: o.Target}
			if o.QPS > 0 {
				r.QPS = e.QPS / o.QPS
			}
			if e.NsPerReq > 0 {
				r.CPUCost = o.NsPerReq / e.NsPerReq
			}
			if e.Profile != nil && e.NsPerReq > 0 && e.Profile.Engine < 1 {
				r.Ceiling = o.NsPerReq / (e.NsPerReq * (1 - e.Profile.Engine))
			}
			out = append(out, r)
		}
	}
	return out
}

// PeerRatio is a gocached target's server CPU per request over a memcached
// release's, under one shape: below 1 is cheaper than memcached.
type PeerRatio struct {
	Shape    string  `json:"shape"`
	Target   string  `json:"target"`
	Against  string  `json:"against"`
	CostOver float64 `json:"cost_over"`
}

// PeerRatios sets every gocached target against every memcached release,
// shape by shape, in the form the CPU targets are stated.
func PeerRatios(sums []Summary) []PeerRatio {
	var out []PeerRatio
	for _, g := range sums {
		if IsMemcached(g.Target) || g.Runs == 0 || g.NsPerReq <= 0 { // gocached's targets and the floors
			continue
		}
		for _, m := range sums {
			if m.Shape == g.Shape && IsMemcached(m.Target) && m.Runs > 0 && m.NsPerReq > 0 {
				out = append(out, PeerRatio{Shape: g.Shape, Target: g.Target, Against: m.Target, CostOver: g.NsPerReq / m.NsPerReq})
			}
		}
	}
	return out
}

// WriteMarkdown prints the summary table and the ratios.
func WriteMarkdown(w io.Writer, o *Options, sums []Summary) error {
	p := bench.NewPrinter(w)
	where := "loopback"
	if o.Testbed != "" {
		where = "a one-queue " + o.Testbed + " NAPI testbed"
	}
	p.Printf("# Engines on %s: one server CPU (%d), mcload on CPU %d\n\n", where, o.ServerCPU, o.ClientCPU)
	p.Printf("%d run(s) of %v per cell, medians; keys %s, values %s, set ratio %g, %d records.\n",
		o.Runs, o.Time, o.KeySize, o.ValueSize, o.Update, o.Records)
	p.Printf("Shape CxD: C connections from one mcload thread, D requests in flight on each.\n\n")
	p.Printf("Profile split (gocached only, from --cpuprofile): system calls / protocol+store / engine+runtime.\n\n")
	p.Printf("| shape | target | runs | req/s (range) | p99 µs | server CPU %% | ns/req | user ns/req | kernel ns/req | profile split %% | steal %% |\n")
	p.Printf("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range sums {
		split := "n/a"
		if s.Profile != nil {
			split = fmt.Sprintf("%.0f / %.0f / %.0f", 100*s.Profile.Kernel, 100*s.Profile.Protocol, 100*s.Profile.Engine)
		}
		p.Printf("| %s | %s | %d | %.0f (%.0f–%.0f) | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %.1f |\n",
			s.Shape, s.Target, s.Runs, s.QPS, s.QPSMin, s.QPSMax, s.P99us, s.ServerCPUPct, s.NsPerReq,
			s.UserNsPerReq, s.SysNsPerReq, split, s.StealPct)
	}
	if rs := Ratios(sums); len(rs) > 0 {
		p.Printf("\nCeiling: the CPU-cost ratio if the epoll engine's own code (its profile's engine share) cost nothing.\n\n")
		p.Printf("| shape | epoll vs | throughput ratio | CPU-cost ratio | ceiling |\n")
		p.Printf("|---|---|---|---|---|\n")
		for _, r := range rs {
			ceiling := "n/a"
			if r.Ceiling > 0 {
				ceiling = fmt.Sprintf("%.2f×", r.Ceiling)
			}
			p.Printf("| %s | %s | %.2f× | %.2f× | %s |\n", r.Shape, r.Against, r.QPS, r.CPUCost, ceiling)
		}
	}
	if rs := PeerRatios(sums); len(rs) > 0 {
		p.Printf("\nServer CPU per request of each gocached engine over memcached's (below 1: cheaper).\n\n")
		p.Printf("| shape | gocached | vs | ns/req ratio |\n|---|---|---|---|\n")
		for _, r := range rs {
			p.Printf("| %s | %s | %s | %.2f× |\n", r.Shape, r.Target, r.Against, r.CostOver)
		}
	}
	return p.Err()
}

// WriteAll writes results.json (records, summaries, ratios) and report.md
// into o.OutDir.
func WriteAll(o *Options, recs []Record) error {
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return err
	}
	sums := Summarize(recs)
	b, err := json.MarshalIndent(struct {
		Records   []Record    `json:"records"`
		Summaries []Summary   `json:"summaries"`
		Ratios    []Ratio     `json:"ratios"`
		Peers     []PeerRatio `json:"peer_ratios"`
	}{recs, sums, Ratios(sums), PeerRatios(sums)}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.OutDir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		return err
	}
	if err := WriteMarkdown(f, o, sums); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
