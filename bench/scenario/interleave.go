//go:build linux

package scenario

import (
	"context"
	"fmt"

	"github.com/gocached/gocached/internal/testproc"
)

// cell is one server in one scenario: what a server start serves.
type cell struct{ server, scenario string }

// plan splits the loads into the two phases of a matrix run. Percentages
// need the MAX of their cell before they can run, so when there are any,
// every MAX round runs first (phase one) and the rest after (phase two);
// without percentages everything runs in one phase, in the order given.
func plan(loads []Load) (maxPhase, rest []Load) {
	needMax, hasMax := false, false
	for _, l := range loads {
		needMax = needMax || l.Fraction > 0
		hasMax = hasMax || l.IsMax()
	}
	if !needMax {
		return nil, loads
	}
	for _, l := range loads {
		if !l.IsMax() {
			rest = append(rest, l)
		}
	}
	return []Load{{}}, rest
}

// rotation is the cell order of round (1-based): the list shifted by one
// per round, so no scenario always runs first after a quiet spell, or
// always right after the same neighbour.
func rotation[T any](cells []T, round int) []T {
	if len(cells) == 0 {
		return nil
	}
	k := (round - 1) % len(cells)
	return append(append([]T(nil), cells[k:]...), cells[:k]...)
}

// interleaved runs the matrix in rounds: each round starts every cell's
// server once (in rotated order) and runs each load once against it, so
// the repetitions of one cell are spread over the whole run and drift in
// the machine (steal, other tenants) lands on every scenario alike.
func (r *runner) interleaved(ctx context.Context) ([]Record, error) {
	var recs []Record
	var cells []cell
	for _, server := range r.o.Servers {
		for _, sc := range r.o.Scenarios {
			if why := r.skipReason(server, sc); why != "" {
				r.logf("%s %s: skipped: %s", server, sc, why)
				recs = append(recs, Record{Server: server, Scenario: sc, Skipped: why, Variant: r.bed.Variant.String()})
				continue
			}
			cells = append(cells, cell{server, sc})
		}
	}
	maxPhase, rest := plan(r.o.Loads)
	maxQPS := map[cell]float64{}
	for _, phase := range [][]Load{maxPhase, rest} {
		if len(phase) == 0 {
			continue
		}
		for round := 1; round <= r.o.Runs; round++ {
			for _, c := range rotation(cells, round) {
				if err := ctx.Err(); err != nil {
					return recs, err
				}
				ref := c
				if r.o.FractionOf != "" {
					ref.scenario = r.o.FractionOf
				}
				recs = append(recs, r.session(ctx, c, phase, round, maxQPS[ref])...)
			}
		}
		for _, c := range cells {
			maxQPS[c] = medianMaxQPS(recs, c)
		}
	}
	return recs, nil
}

func (r *runner) skipReason(server, sc string) string {
	if ok, why := Supports(server, sc); !ok {
		return why
	}
	if server == Gocached && !r.pollMode && sc != "base" {
		return "gocached binary has no --poll-mode"
	}
	return r.kernelLacks(sc)
}

// medianMaxQPS is the median achieved rate of c's MAX runs the machine did
// not disturb (all of them when every one was disturbed).
func medianMaxQPS(recs []Record, c cell) float64 {
	var mine []Record
	for _, r := range recs {
		if r.Server == c.server && r.Scenario == c.scenario && r.OfferedQPS == 0 && r.Load == "MAX" {
			mine = append(mine, r)
		}
	}
	kept, _, _ := keep(mine)
	var qs []float64
	for _, r := range kept {
		qs = append(qs, r.Result.QPS)
	}
	return median(qs)
}

// session starts c's server, preloads it, runs loads once each and stops it.
func (r *runner) session(ctx context.Context, c cell, loads []Load, round int, maxQPS float64) []Record {
	variant := r.bed.Variant.String()
	fail := func(err error) []Record {
		r.logf("%s %s round %d: %v", c.server, c.scenario, round, err)
		return []Record{{Server: c.server, Scenario: c.scenario, Run: round, Variant: variant, Error: err.Error()}}
	}
	// memcached's deferX lives in the device knobs; everything else starts
	// from zeros so no earlier scenario leaks into this one.
	knobs := "base"
	if c.server == Memcached {
		knobs = c.scenario
	}
	if err := setDeviceKnobs(ctx, r.bed, knobs); err != nil {
		return fail(err)
	}
	defer func() { _ = setDeviceKnobs(context.WithoutCancel(ctx), r.bed, "base") }()
	srv, err := startServer(ctx, r.bed, r.o, c.server, c.scenario, r.pollMode)
	if err != nil {
		return fail(err)
	}
	defer func() {
		// SIGTERM: gocached restores the NAPI knobs it changed before it exits.
		if err := srv.Stop(0); err != nil {
			r.logf("%s %s: %v", c.server, c.scenario, err)
		}
	}()
	if _, err := r.mcload(ctx, srv, "--loadonly"); err != nil {
		return fail(fmt.Errorf("preload: %w", err))
	}
	var recs []Record
	for _, load := range loads {
		rec := r.measure(ctx, srv, c.server, c.scenario, load, maxQPS, round)
		rec.Variant = variant
		r.logf("%s %-10s %-6s round %d: %s", c.server, c.scenario, load, round, rec.summary())
		recs = append(recs, rec)
	}
	return recs
}

// reactorStats reads gocached's reactor counters, nil for other servers or
// on error (they are a diagnosis aid, not a measurement a run needs).
func (r *runner) reactorStats(ctx context.Context, srv *testproc.Proc, server string) map[string]uint64 {
	if server != Gocached {
		return nil
	}
	m, err := readReactorStats(ctx, serverSpec(r.bed, r.o, server, "base", false).Dial, srv.Addr())
	if err != nil {
		r.logf("%s: stats reactors: %v", server, err)
		return nil
	}
	return m
}
