package bench

import (
	"math"
	"testing"
)

func FuzzParseDistribution(f *testing.F) {
	for _, s := range []string{"30", "fixed:5", "uniform:100", "uniform:10-20", "normal:5,1", "exponential",
		"exponential:2", "pareto:0,16.0292,0.154971", "gev:30.7984,8.20449,0.078688", "fb_key", "fb_value", "fb_ia", "gev:0,1,-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		d, err := ParseDistribution(spec)
		if err != nil {
			return
		}
		// Whatever parses must be usable: sampling never panics, and the
		// spec it prints parses back.
		for _, p := range []float64{0, 0.25, 0.5, 0.999} {
			_ = d.Quantile(p)
			_ = d.CDF(d.Quantile(p))
		}
		_ = clampSize(d.Quantile(0.5), 0, 100)
		if _, err := ParseDistribution(d.String()); err != nil && !math.IsNaN(d.Mean()) {
			t.Fatalf("%q parsed as %v, whose spec %q does not parse: %v", spec, d, d.String(), err)
		}
	})
}
