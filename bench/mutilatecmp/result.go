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
	// ServerCPUPct and ClientCPUPct are the server's and mutilate's CPU
	// over the run, in % of one CPU; StealPct the hypervisor's steal and
	// OtherCPUPct other processes' CPU, in % of the whole machine.
	ServerCPUPct float64 `json:"server_cpu_pct"`
	ClientCPUPct float64 `json:"client_cpu_pct"`
	StealPct     float64 `json:"steal_pct"`
	OtherCPUPct  float64 `json:"other_cpu_pct"`
	Disturbed    string  `json:"disturbed,omitempty"` // why the machine disturbed the run
	QuietWaitS   float64 `json:"quiet_wait_s"`        // waited for a quiet machine before the start
	Error        string  `json:"error,omitempty"`
}

func (r Record) summary() string {
	if r.Error != "" {
		return "error: " + r.Error
	}
	s := fmt.Sprintf("%.0f req/s, server %.0f %% CPU, mutilate %.0f %%, other processes %.1f %%, steal %.1f %%",
		r.Report.QPS, r.ServerCPUPct, r.ClientCPUPct, r.OtherCPUPct, r.StealPct)
	if r.Gets > 0 {
		s += fmt.Sprintf(", get p50 %.0f µs p99 %.0f µs (mutilate's p99 %.0f) over %d gets", r.P50Us, r.P99Us, r.Report.ReadP99Us, r.Gets)
	}
	if r.QuietWaitS >= 2 {
		s += fmt.Sprintf(", after %.0f s waiting for a quiet machine", r.QuietWaitS)
	}
	if r.Disturbed != "" {
		s += " [disturbed: " + r.Disturbed + "]"
	}
	return s
}

// Peak is memcached's closed-loop rate the loads are fractions of.
type Peak struct {
	QPS          float64  `json:"qps"`
	Given        bool     `json:"given"` // from --peak, not measured
	ServerCPUPct float64  `json:"server_cpu_pct"`
	Used         int      `json:"used"` // runs the median is over
	Runs         []Record `json:"runs,omitempty"`
}

// settle takes the median over the peak runs the machine did not disturb
// (over all of them if it disturbed every one).
func (p *Peak) settle() error {
	kept, _, _ := keep(p.Runs)
	var qps, cpu []float64
	for _, r := range kept {
		if r.Report.QPS > 0 {
			qps = append(qps, r.Report.QPS)
			cpu = append(cpu, r.ServerCPUPct)
		}
	}
	if len(qps) == 0 || kept[0].Disturbed != "" {
		return fmt.Errorf("no peak run against %s that the machine did not disturb: wait for a quieter machine or give --peak", Memcached)
	}
	p.QPS, p.ServerCPUPct, p.Used = median(qps), median(cpu), len(qps)
	return nil
}

// keep picks the runs a median is taken over: the error-free runs the
// machine did not disturb, or all error-free runs when it disturbed every
// one (allDisturbed then says so).
func keep(recs []Record) (kept []Record, excluded int, allDisturbed bool) {
	var disturbed []Record
	for _, r := range recs {
		switch {
		case r.Error != "":
		case r.Disturbed != "":
			disturbed = append(disturbed, r)
		default:
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 && len(disturbed) > 0 {
		return disturbed, 0, true
	}
	return kept, len(disturbed), false
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
	Runs         int     `json:"runs"`     // runs the medians are over
	Excluded     int     `json:"excluded"` // disturbed runs left out
	AllDisturbed bool    `json:"all_disturbed"`
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
// appear (Run's order: loads as given, then targets); medians are over the
// runs keep picks.
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
		}
		groups[k] = append(groups[k], r)
	}
	var out []Summary
	for _, k := range order {
		var g []Record
		s := Summary{Target: k.target, Load: k.load, TargetQPS: groups[k][0].TargetQPS}
		g, s.Excluded, s.AllDisturbed = keep(groups[k])
		s.Runs = len(g)
		pick := func(f func(Record) float64) []float64 {
			xs := make([]float64, len(g))
			for i, r := range g {
				xs[i] = f(r)
			}
			return xs
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
	// memcached's p99 of the same round, out of Paired rounds where the
	// machine disturbed neither: a paired count that a shared machine's
	// drift between rounds does not blur.
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

// pairedBelow counts the rounds in which target's p99 at load was below
// memcached's, over the rounds where neither run was disturbed (over every
// error-free pair when there is no such round).
func pairedBelow(recs []Record, load float64, target string) (below, paired int) {
	find := func(t string, round int) (Record, bool) {
		for _, r := range recs {
			if r.Target == t && r.Load == load && r.Round == round && r.Error == "" {
				return r, true
			}
		}
		return Record{}, false
	}
	var clean, all [2]int
	seen := map[int]bool{}
	for _, r := range recs {
		if r.Target != target || r.Load != load || seen[r.Round] {
			continue
		}
		seen[r.Round] = true
		g, ok1 := find(target, r.Round)
		m, ok2 := find(Memcached, r.Round)
		if !ok1 || !ok2 {
			continue
		}
		win := 0
		if g.P99Us < m.P99Us {
			win = 1
		}
		all[0], all[1] = all[0]+win, all[1]+1
		if g.Disturbed == "" && m.Disturbed == "" {
			clean[0], clean[1] = clean[0]+win, clean[1]+1
		}
	}
	if clean[1] > 0 {
		return clean[0], clean[1]
	}
	return all[0], all[1]
}
