package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The empirical CDF of n samples stays within dkwBound of the true CDF with
// probability 1-2e-9 (Dvoretzky–Kiefer–Wolfowitz), for any distribution.
func dkwBound(n int) float64 { return math.Sqrt(math.Log(2/2e-9) / (2 * float64(n))) }

func TestDistributionSamples(t *testing.T) {
	tests := []struct {
		spec    string
		meanTol float64 // relative tolerance on the sample mean
	}{
		{"fixed:30", 1e-12},
		{"42", 1e-12},
		{"uniform:1000", 0.01},
		{"uniform:10-20", 0.01},
		{"normal:100,15", 0.01},
		{"exponential:0.5", 0.02},
		{"pareto:0,16.0292,0.154971", 0.02},
		{"gev:30.7984,8.20449,0.078688", 0.01},
		{"gev:10,2,0", 0.01},
		{"pareto:1,2,0", 0.02},
		{"fb_key", 0.01},
		{"fb_value", 0.05}, // heavy tail: ξ≈0.35 leaves a large variance
		{"fb_ia", 0.02},
	}
	const n = 200000
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			d, err := ParseDistribution(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			xs := make([]float64, n)
			sum := 0.0
			for i := range xs {
				xs[i] = Sample(d, r)
				sum += xs[i]
			}
			mean := sum / n
			if want := d.Mean(); math.Abs(mean-want) > tt.meanTol*math.Abs(want) {
				t.Errorf("sample mean %g, analytic %g (tolerance %g%%)", mean, want, 100*tt.meanTol)
			}
			slices.Sort(xs)
			eps := dkwBound(n)
			for _, p := range []float64{0.05, 0.1, 0.5, 0.9, 0.95, 0.99} {
				x := d.Quantile(p)
				emp := float64(countAtMost(xs, x)) / n
				if got := d.CDF(x); math.Abs(emp-got) > eps {
					t.Errorf("at x=%g (p=%g): empirical CDF %g, analytic CDF %g", x, p, emp, got)
				}
			}
		})
	}
}

func countAtMost(sorted []float64, x float64) int {
	i, found := slices.BinarySearch(sorted, x)
	for found && i < len(sorted) && sorted[i] == x {
		i++
	}
	return i
}

// Quantile must invert CDF for the continuous distributions.
func TestQuantileInvertsCDF(t *testing.T) {
	for _, spec := range []string{"uniform:3-9", "normal:0,1", "exponential:3", "fb_key", "fb_ia", "gev:0,1,-0.2", "pareto:5,2,-0.25", "gev:1,1,0"} {
		d, err := ParseDistribution(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []float64{0.001, 0.1, 0.37, 0.5, 0.8, 0.999} {
			if got := d.CDF(d.Quantile(p)); math.Abs(got-p) > 1e-9 {
				t.Errorf("%s: CDF(Quantile(%g)) = %g", spec, p, got)
			}
		}
	}
}

// Values worked out by hand from the paper's parameters, independent of the code.
func TestETCKnownValues(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"fb_key median", FBKey.Quantile(0.5), 33.84923},
		{"fb_key mean", FBKey.Mean(), 36.22305},
		{"fb_ia mean", FBIA.Mean(), 18.96882},
		{"fb_value mean", FBValue{}.Mean(), 194.44483},
		{"fb_value median", FBValue{}.Quantile(0.5), 39.17419},
		{"fb_value P(size<=14)", FBValue{}.CDF(14.5), 0.44155},
		{"fb_value P(size=2)", FBValue{}.CDF(2) - FBValue{}.CDF(1), 0.17820},
		{"fb_value P(size=11)", FBValue{}.CDF(11) - FBValue{}.CDF(10), 0.08989},
		{"exponential median", Exponential{Rate: 2}.Quantile(0.5), math.Ln2 / 2},
	}
	for _, tt := range tests {
		if math.Abs(tt.got-tt.want) > 1e-4*math.Max(1, math.Abs(tt.want)) {
			t.Errorf("%s = %.6f, want %.6f", tt.name, tt.got, tt.want)
		}
	}
}

func TestFBValueHeadFrequencies(t *testing.T) {
	const n = 400000
	r := rand.New(rand.NewPCG(7, 7))
	var counts [15]int
	for range n {
		if s := int(Sample(FBValue{}, r)); s < 15 {
			counts[s]++
		}
	}
	eps := dkwBound(n)
	for size, p := range fbValueHead {
		if got := float64(counts[size]) / n; math.Abs(got-p) > eps {
			t.Errorf("P(size=%d) = %.5f, want %.5f", size, got, p)
		}
	}
}

func TestScaleToMean(t *testing.T) {
	for _, spec := range []string{"exponential", "fb_ia", "fixed:3", "uniform:0-2"} {
		d, err := ParseDistribution(spec)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ScaleToMean(d, 250e3)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Mean(); math.Abs(got-250e3) > 1e-6 {
			t.Errorf("%s scaled: mean %g", spec, got)
		}
		if got, want := s.CDF(s.Quantile(0.3)), d.CDF(d.Quantile(0.3)); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s scaled: CDF %g, unscaled %g", spec, got, want)
		}
	}
	if _, err := ScaleToMean(Fixed{Value: 0}, 1); err == nil {
		t.Error("a zero-mean distribution scaled without error")
	}
	if _, err := ScaleToMean(GPareto{Scale: 1, Shape: 1.5}, 1); err == nil {
		t.Error("an infinite-mean distribution scaled without error")
	}
}

func TestParseDistributionErrors(t *testing.T) {
	for _, spec := range []string{"", "bogus", "fixed", "fixed:a", "uniform:1,2,3", "normal:1", "normal:0,0",
		"pareto:1,2", "gev:0,-1,0", "exponential:0", "fb_key:3", "uniform:5-1"} {
		if d, err := ParseDistribution(spec); err == nil {
			t.Errorf("ParseDistribution(%q) = %v, want an error", spec, d)
		}
	}
}

func TestParseDistributionRoundTrip(t *testing.T) {
	for _, spec := range []string{"fixed:30", "uniform:0,10", "normal:5,1", "exponential:2", "pareto:0,1,0.5", "gev:1,2,0.1", "fb_key", "fb_value", "fb_ia"} {
		d, err := ParseDistribution(spec)
		if err != nil {
			t.Fatal(err)
		}
		d2, err := ParseDistribution(d.String())
		if err != nil {
			t.Fatalf("%s: reparse %q: %v", spec, d.String(), err)
		}
		if d2 != d {
			t.Errorf("%s: round trip gave %v, want %v", spec, d2, d)
		}
	}
}
