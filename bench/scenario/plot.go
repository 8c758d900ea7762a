//go:build linux

package scenario

import (
	"fmt"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// PlotFiles are the PNGs WritePlots creates.
var PlotFiles = []string{"p99_vs_load.png", "cpu_vs_load.png", "cpu_ns_per_query_vs_load.png", "bench_ns_per_query_vs_load.png"}

// series is one line: a server in a scenario, its points by load.
type series struct {
	server, scenario string
	xys              plotter.XYs
}

// loadSeries groups the summaries into one line per server and scenario.
// A fixed load sits at its offered rate; MAX sits at the rate it achieved.
func loadSeries(sums []Summary, y func(Summary) float64) []series {
	var out []series
	index := map[[2]string]int{}
	for _, s := range sums {
		if s.Runs == 0 {
			continue
		}
		k := [2]string{s.Server, s.Scenario}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, series{server: s.Server, scenario: s.Scenario})
		}
		x := s.OfferedQPS
		if x == 0 {
			x = s.QPS.Median
		}
		out[i].xys = append(out[i].xys, plotter.XY{X: x, Y: y(s)})
	}
	for i := range out {
		slices.SortFunc(out[i].xys, func(a, b plotter.XY) int {
			switch {
			case a.X < b.X:
				return -1
			case a.X > b.X:
				return 1
			}
			return 0
		})
	}
	return out
}

// WritePlots draws p99 latency, server CPU and CPU-ns per query against
// load: one line per scenario, memcached dashed.
func WritePlots(dir string, sums []Summary) error {
	charts := []struct {
		file, title, ylabel string
		y                   func(Summary) float64
		log                 bool // a tail spans decades: one disturbed cell would flatten the rest
	}{
		{PlotFiles[0], "p99 latency vs load", "p99 latency (µs, log scale)", func(s Summary) float64 { return s.P99.Median }, true},
		{PlotFiles[1], "server CPU vs load", "server CPU (% of one CPU)", func(s Summary) float64 { return s.CPU.Median }, false},
		{PlotFiles[2], "server CPU per query vs load", "CPU-ns per query", func(s Summary) float64 { return s.CPUNsPerQuery.Median }, false},
		// The series' CPU claims are about the machine, where busy polling
		// moves receive work from softirq into the server process.
		{PlotFiles[3], "benchmark CPU per query vs load (server, client, NAPI kthreads, softirq)", "CPU-ns per query",
			func(s Summary) float64 { return s.BenchNsPerQuery.Median }, false},
	}
	for _, c := range charts {
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text = "load (queries/s; MAX at its achieved rate)"
		p.Y.Label.Text = c.ylabel
		p.Legend.Top = true
		y := c.y
		if c.log {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
			// A log axis cannot show 0; 1 µs is below any real latency.
			y = func(s Summary) float64 { return max(c.y(s), 1) }
		}
		colors := map[string]int{}
		for _, s := range loadSeries(sums, y) {
			line, points, err := plotter.NewLinePoints(s.xys)
			if err != nil {
				return fmt.Errorf("%s: %s %s: %w", c.file, s.server, s.scenario, err)
			}
			ci, ok := colors[s.scenario]
			if !ok {
				ci = len(colors)
				colors[s.scenario] = ci
			}
			line.Color, points.Color = plotutil.Color(ci), plotutil.Color(ci)
			points.Shape = plotutil.Shape(ci)
			if s.server == Memcached {
				line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			}
			p.Add(line, points)
			p.Legend.Add(s.server+" "+s.scenario, line, points)
		}
		if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(dir, c.file)); err != nil {
			return fmt.Errorf("%s: %w", c.file, err)
		}
	}
	return nil
}
