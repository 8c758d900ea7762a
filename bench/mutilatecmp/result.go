package mutilatecmp

import (
	"fmt"
	"slices"
)

// Record is one mutilate run against one fresh server.
type Record struct {
	Target    string  `json:"target"`
	Load      float64 `json:"load"`       // fraction of the peak; 0 for a peak run
	TargetQPS int     `json:"target_qps"` // mutilate -q; 0 is the closed loop
	Round     int     `json:"round"`
	Report    Report  `json:"report"`
	// Exact get latencies from the saved samples (open-loop runs only).
	Gets   int     `json:"gets"`
	P50Us  float64 `json:"p50_us"`
	P99Us  float64 `json:"p99_us"`
	P999Us float64 `json:"p999_us"`
	// ServerCPUPct is the server's run time over the run, in % of one CPU;
	// StealPct the hypervisor's steal over the whole machine.
	ServerCPUPct float64 `json:"server_cpu_pct"`
	StealPct     float64 `json:"steal_pct"`
	Error        string  `json:"error,omitempty"`
}

func (r Record) summary() string {
	if r.Error != "" {
		return "error: " + r.Error
	}
	s := fmt.Sprintf("%.0f req/s, server %.0f %% CPU, steal %.1f %%", r.Report.QPS, r.ServerCPUPct, r.StealPct)
	if r.Gets > 0 {
		s += fmt.Sprintf(", get p50 %.0f µs p99 %.0f µs (mutilate's p99 %.0f) over %d gets", r.P50Us, r.P99Us, r.Report.ReadP99Us, r.Gets)
	}
	return s
}

// Peak is memcached's closed-loop rate the loads are fractions of.
type Peak struct {
	QPS          float64  `json:"qps"`
	Given        bool     `json:"given"` // from --peak, not measured
	ServerCPUPct float64  `json:"server_cpu_pct"`
	Runs         []Record `json:"runs,omitempty"`
}

// settle takes the median over the clean peak runs.
func (p *Peak) settle() error {
	var qps, cpu []float64
	for _, r := range p.Runs {
		if r.Error == "" && r.Report.QPS > 0 {
			qps = append(qps, r.Report.QPS)
			cpu = append(cpu, r.ServerCPUPct)
		}
	}
	if len(qps) == 0 {
		return fmt.Errorf("no clean peak run against %s", Memcached)
	}
	p.QPS, p.ServerCPUPct = median(qps), median(cpu)
	return nil
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

// Summary is one target at one load over the rounds: medians, and the
// range of the p99.
type Summary struct {
	Target       string  `json:"target"`
	Load         float64 `json:"load"`
	TargetQPS    int     `json:"target_qps"`
	Runs         int     `json:"runs"` // clean runs
	QPS          float64 `json:"qps"`
	P50Us        float64 `json:"p50_us"`
	P99Us        float64 `json:"p99_us"`
	P99MinUs     float64 `json:"p99_min_us"`
	P99MaxUs     float64 `json:"p99_max_us"`
	P999Us       float64 `json:"p999_us"`
	ServerCPUPct float64 `json:"server_cpu_pct"`
	StealPct     float64 `json:"steal_pct"`
	StealMaxPct  float64 `json:"steal_max_pct"`
}

// Summarize groups the records by (load, target) in the order they first
// appear (Run's order: loads as given, then targets); failed runs count in
// no median.
func Summarize(recs []Record) []Summary {
	type key struct {
		load   float64
		target string
	}
	var order []key
	groups := map[key][]Record{}
	for _, r := range recs {
		k := key{r.Load, r.Target}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
			groups[k] = nil
		}
		if r.Error == "" {
			groups[k] = append(groups[k], r)
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
		s := Summary{Target: k.target, Load: k.load, Runs: len(g)}
		for _, r := range recs {
			if r.Load == k.load && r.Target == k.target {
				s.TargetQPS = r.TargetQPS
			}
		}
		if len(g) > 0 {
			p99 := pick(func(r Record) float64 { return r.P99Us })
			steal := pick(func(r Record) float64 { return r.StealPct })
			s.QPS = median(pick(func(r Record) float64 { return r.Report.QPS }))
			s.P50Us = median(pick(func(r Record) float64 { return r.P50Us }))
			s.P99Us, s.P99MinUs, s.P99MaxUs = median(p99), slices.Min(p99), slices.Max(p99)
			s.P999Us = median(pick(func(r Record) float64 { return r.P999Us }))
			s.ServerCPUPct = median(pick(func(r Record) float64 { return r.ServerCPUPct }))
			s.StealPct, s.StealMaxPct = median(steal), slices.Max(steal)
		}
		out = append(out, s)
	}
	return out
}

// Versus sets one gocached engine against memcached at one load.
type Versus struct {
	Load   float64 `json:"load"`
	Target string  `json:"target"`
	// P99Ratio is the engine's median p99 over memcached's: below 1 is
	// a lower tail than memcached's.
	P99Ratio float64 `json:"p99_ratio"`
	// Below counts the rounds in which the engine's p99 was below
	// memcached's p99 of the same round, out of Paired rounds where both
	// ran cleanly: a paired count that a shared machine's drift between
	// rounds does not blur.
	Below  int `json:"rounds_below"`
	Paired int `json:"rounds_paired"`
}

// Compare sets every gocached engine against memcached, load by load.
func Compare(recs []Record, sums []Summary) []Versus {
	var out []Versus
	for _, g := range sums {
		if g.Target == Memcached || g.Runs == 0 {
			continue
		}
		for _, m := range sums {
			if m.Target != Memcached || m.Load != g.Load || m.Runs == 0 || m.P99Us <= 0 {
				continue
			}
			v := Versus{Load: g.Load, Target: g.Target, P99Ratio: g.P99Us / m.P99Us}
			v.Below, v.Paired = pairedBelow(recs, g.Load, g.Target)
			out = append(out, v)
		}
	}
	return out
}

func pairedBelow(recs []Record, load float64, target string) (below, paired int) {
	p99 := func(t string, round int) (float64, bool) {
		for _, r := range recs {
			if r.Target == t && r.Load == load && r.Round == round && r.Error == "" {
				return r.P99Us, true
			}
		}
		return 0, false
	}
	seen := map[int]bool{}
	for _, r := range recs {
		if r.Target != target || r.Load != load || seen[r.Round] {
			continue
		}
		seen[r.Round] = true
		g, ok1 := p99(target, r.Round)
		m, ok2 := p99(Memcached, r.Round)
		if ok1 && ok2 {
			paired++
			if g < m {
				below++
			}
		}
	}
	return below, paired
}
