package flash

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Spread is a median and the range it comes from.
type Spread struct {
	Median, Min, Max float64
	N                int // values it rests on
}

func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// Summary is one target's medians over its good runs.
type Summary struct {
	Target string `json:"target"`
	Label  string `json:"label"` // the target, and what it lacks
	Runs   int    `json:"runs"`  // runs the medians rest on
	Failed int    `json:"failed"`
	// Disturbed runs are left out of the medians, unless every run was
	// (then AllDisturbed, and the medians are theirs).
	Disturbed    int  `json:"disturbed"`
	AllDisturbed bool `json:"all_disturbed"`
	FlashTier    bool `json:"flash_tier"`

	HitPct, FlashPct, QPS                        Spread
	P50, P99, RAMP50, RAMP99, FlashP50, FlashP99 Spread
	ExtMB, ExtCachedMB                           Spread // ext_path file written, and in the page cache
	NsPerReq, RSSMB, StealPct, OtherProcsPct     Spread
	// Agreement is the tagged phase's flash hits over the server's
	// get_extstore in it: near 1 when the RAM/flash split is right.
	Agreement Spread
}

// Summarize groups records by target, in the order targets first appear,
// and takes medians over the runs without errors and without disturbance.
func Summarize(recs []Record) []Summary {
	var out []Summary
	index := map[string]int{}
	groups := map[string][]Record{}
	disturbed := map[string][]Record{}
	for _, r := range recs {
		if _, ok := index[r.Target]; !ok {
			index[r.Target] = len(out)
			out = append(out, Summary{Target: r.Target})
		}
		switch {
		case r.Error != "":
			out[index[r.Target]].Failed++
		case r.Disturbed != "":
			out[index[r.Target]].Disturbed++
			disturbed[r.Target] = append(disturbed[r.Target], r)
		default:
			groups[r.Target] = append(groups[r.Target], r)
		}
	}
	for i := range out {
		g := groups[out[i].Target]
		if len(g) == 0 && len(disturbed[out[i].Target]) > 0 {
			g, out[i].AllDisturbed = disturbed[out[i].Target], true
		}
		pick := func(f func(*Record) float64) Spread {
			var xs []float64
			for j := range g {
				if v := f(&g[j]); v >= 0 {
					xs = append(xs, v)
				}
			}
			return spreadOf(xs)
		}
		s := &out[i]
		s.Runs = len(g)
		s.FlashTier = len(g) > 0
		for _, r := range g {
			s.FlashTier = s.FlashTier && r.FlashTier
		}
		s.Label = s.Target
		// gocached reports the memcached release it follows: not its own.
		if s.Target == Memcached && len(g) > 0 && g[0].Version != "" {
			s.Label += " " + g[0].Version
		}
		if !s.FlashTier {
			s.Label += " (no flash tier: ext_path ignored)"
		}
		s.HitPct = pick(func(r *Record) float64 { return 100 * r.HitRatio() })
		s.FlashPct = pick(func(r *Record) float64 { return 100 * r.FlashShare() })
		s.QPS = pick(func(r *Record) float64 { return r.QPS })
		s.P50 = pick(func(r *Record) float64 { return r.All.P50 })
		s.P99 = pick(func(r *Record) float64 { return r.All.P99 })
		// A class with no hits has no latency: left out, not counted as 0.
		s.RAMP50 = pick(func(r *Record) float64 { return orNone(r.RAM.Count, r.RAM.P50) })
		s.RAMP99 = pick(func(r *Record) float64 { return orNone(r.RAM.Count, r.RAM.P99) })
		s.FlashP50 = pick(func(r *Record) float64 { return orNone(r.Flash.Count, r.Flash.P50) })
		s.FlashP99 = pick(func(r *Record) float64 { return orNone(r.Flash.Count, r.Flash.P99) })
		s.NsPerReq = pick(func(r *Record) float64 { return r.NsPerReq })
		s.RSSMB = pick(func(r *Record) float64 { return float64(r.RSS) / (1 << 20) })
		s.StealPct = pick(func(r *Record) float64 { return r.StealPct })
		s.OtherProcsPct = pick(func(r *Record) float64 { return r.OtherProcsPct })
		s.ExtMB = pick(func(r *Record) float64 { return float64(r.ExtFileBytes) / (1 << 20) })
		s.ExtCachedMB = pick(func(r *Record) float64 { return float64(r.ExtCachedBytes) / (1 << 20) })
		s.Agreement = pick(func(r *Record) float64 { return r.Agreement() })
	}
	return out
}

func orNone(count int64, v float64) float64 {
	if count == 0 {
		return -1
	}
	return v
}

// fmtSpread prints a median with its range, or "–" for no data.
func fmtSpread(s Spread, format string) string {
	if s.N == 0 {
		return "–"
	}
	m, lo, hi := fmt.Sprintf(format, s.Median), fmt.Sprintf(format, s.Min), fmt.Sprintf(format, s.Max)
	if lo == hi {
		return m
	}
	return fmt.Sprintf("%s (%s–%s)", m, lo, hi)
}

// WriteMarkdown prints the comparison table and what the columns mean.
func WriteMarkdown(w io.Writer, o *Options, sums []Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "-m %d, ext_path %d MB", o.MemoryMB, o.ExtSizeMB)
	if len(o.ExtOptions) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(o.ExtOptions, ","))
	}
	fmt.Fprintf(&b, ", %g x -m of values %s, zipf %g, %d conns x 1, measured %v or %d gets; medians (min–max) over rounds,"+
		" leaving out runs with steal above %g %% or other processes above %g %% of the machine (disturbed)\n\n",
		o.WorkingSet, o.ValueSize, o.ZipfS, o.Conns, o.Time, o.Requests, o.MaxStealPct, o.MaxOtherPct)
	b.WriteString("| server | runs | hit % | flash % of hits | gets/s | p50 µs | p99 µs | RAM hit p50/p99 µs | flash hit p50/p99 µs | split check | server ns/req | RSS MB | ext file MB / in page cache | steal % | other processes % |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sums {
		runs := fmt.Sprint(s.Runs)
		switch {
		case s.AllDisturbed:
			runs += " (all disturbed)"
		case s.Disturbed > 0:
			runs += fmt.Sprintf(" (+%d disturbed)", s.Disturbed)
		}
		if s.Failed > 0 {
			runs += fmt.Sprintf(" (+%d failed)", s.Failed)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s | %s / %s | %s | %s |\n",
			s.Label, runs,
			fmtSpread(s.HitPct, "%.1f"), fmtSpread(s.FlashPct, "%.1f"),
			fmtSpread(s.QPS, "%.0f"),
			fmtSpread(s.P50, "%.0f"), fmtSpread(s.P99, "%.0f"),
			fmtSpread(s.RAMP50, "%.0f"), fmtSpread(s.RAMP99, "%.0f"),
			fmtSpread(s.FlashP50, "%.0f"), fmtSpread(s.FlashP99, "%.0f"),
			fmtSpread(s.Agreement, "%.3f"),
			fmtSpread(s.NsPerReq, "%.0f"), fmtSpread(s.RSSMB, "%.0f"),
			fmtSpread(s.ExtMB, "%.0f"), fmtSpread(s.ExtCachedMB, "%.0f"),
			fmtSpread(s.StealPct, "%.1f"), fmtSpread(s.OtherProcsPct, "%.1f"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// results is the JSON file: the options, every record, the summaries.
type results struct {
	Options   Options   `json:"options"`
	Records   []Record  `json:"records"`
	Summaries []Summary `json:"summaries"`
}

// WriteJSON writes every record and the summaries.
func WriteJSON(w io.Writer, o *Options, recs []Record) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results{*o, recs, Summarize(recs)})
}

// ReadJSON reads what WriteJSON wrote: the options and the records.
func ReadJSON(r io.Reader) (Options, []Record, error) {
	var res results
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		return Options{}, nil, fmt.Errorf("results: %w", err)
	}
	return res.Options, res.Records, nil
}
