//go:build linux

package scenario

import (
	"slices"
)

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	n := len(s)
	return (s[n/2-1] + s[n/2]) / 2
}

// Stat is the median of a metric over repetitions with its range.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func statOf(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	return Stat{Median: median(xs), Min: slices.Min(xs), Max: slices.Max(xs)}
}

// Spread is (max-min)/median, the relative spread of repetitions.
func (s Stat) Spread() float64 {
	if s.Median == 0 {
		return 0
	}
	return (s.Max - s.Min) / s.Median
}

// measured reports whether rec holds a measurement (not skipped or failed).
func (rec Record) measured() bool {
	return rec.Skipped == "" && rec.Error == "" && rec.Result != nil
}

// keep picks the runs a median is taken over: the measured runs the
// machine did not disturb. When every measured run was disturbed they are
// all kept (a table of blanks says less than a flagged number), and
// allDisturbed says so; the report then marks the row.
func keep(recs []Record) (kept []Record, excluded int, allDisturbed bool) {
	var disturbed []Record
	for _, r := range recs {
		if !r.measured() {
			continue
		}
		if r.Disturbed != "" {
			disturbed = append(disturbed, r)
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) == 0 && len(disturbed) > 0 {
		return disturbed, 0, true
	}
	return kept, len(disturbed), false
}

// Which side of the benchmark ran out of CPU.
const (
	SatNone   = "none"   // neither core full: round trips (latency) bound the rate
	SatClient = "client" // the client's cores were full, the server's were not
	SatServer = "server" // the server's cores were full, the client's were not
	SatBoth   = "both"
	// SatPolling: the client had headroom, and the server's core was full,
	// but the server busy-polls, which fills its core whatever the load:
	// the CPU counters cannot say whether it had capacity left.
	SatPolling = "server?"
)

// SaturatedBusyPct is the share of a core's available (not stolen) time
// above which it counts as full. 100 is never reached in practice: tick
// sampling and the odd idle tick between wake-ups leave a few percent.
const SaturatedBusyPct = 90

// classify names the saturated side from the busy shares (0-100, of the
// time not stolen) of the server's and the client's cores. Core shares,
// not process shares: softirq receive work and NAPI kthreads count for the
// core they ran on, which the testbed variant decides.
func classify(serverCoreBusy, clientCoreBusy float64, serverPolls bool) string {
	s, c := serverCoreBusy >= SaturatedBusyPct, clientCoreBusy >= SaturatedBusyPct
	switch {
	case s && c:
		return SatBoth
	case c:
		return SatClient
	case s && serverPolls:
		return SatPolling
	case s:
		return SatServer
	}
	return SatNone
}

// coreBusyPct is the busy share of the available time of cpus over an
// interval of wall ticks, d holding the per-CPU deltas: busy / (wall -
// steal), in percent, busy being wallBusyTicks (the sampled busy ticks
// miss short bursts). Stolen time is taken out because the core could not
// have used it either way; CPUs missing from d are ignored.
func coreBusyPct(d map[int]SystemCPU, cpus []int, wall float64) float64 {
	var busy, avail float64
	for _, c := range cpus {
		t, ok := d[c]
		if !ok {
			continue
		}
		busy += wallBusyTicks(t, wall)
		avail += max(wall-float64(t.Steal), 0)
	}
	if avail == 0 {
		return 0
	}
	return min(100, 100*busy/avail)
}

// pairedRatios divides metric of scenario a by that of scenario b for the
// same server and load, run by run: the two ran in the same interleaving
// round, minutes apart at most, so drift in the machine (steal, other
// tenants) largely cancels in the ratio even when it moves both numbers.
// Pairs where either run was disturbed are left out, unless no pair is
// clean (then all pairs count, as keep does).
func pairedRatios(recs []Record, server, load, a, b string, metric func(Record) float64) []float64 {
	type key struct{ run int }
	base := map[key]Record{}
	for _, r := range recs {
		if r.Server == server && r.Load == load && r.Scenario == b && r.measured() {
			base[key{r.Run}] = r
		}
	}
	var clean, all []float64
	for _, r := range recs {
		if r.Server != server || r.Load != load || r.Scenario != a || !r.measured() {
			continue
		}
		o, ok := base[key{r.Run}]
		if !ok || metric(o) == 0 {
			continue
		}
		q := metric(r) / metric(o)
		all = append(all, q)
		if r.Disturbed == "" && o.Disturbed == "" {
			clean = append(clean, q)
		}
	}
	if len(clean) > 0 {
		return clean
	}
	return all
}
