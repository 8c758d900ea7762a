package flash

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestZipfRejectsBadParameters(t *testing.T) {
	for _, c := range []struct {
		n int
		s float64
	}{{0, 1}, {10, -0.5}, {10, math.NaN()}, {10, math.Inf(1)}} {
		if _, err := NewZipf(c.n, c.s); err == nil {
			t.Errorf("NewZipf(%d, %g) accepted", c.n, c.s)
		}
	}
}

func TestZipfRecordIsAPermutation(t *testing.T) {
	for _, n := range []int{1, 2, 10, 1000, 1024, 26214} {
		z, err := NewZipf(n, 0.99)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, n)
		for r := range n {
			rec := z.Record(r)
			if rec < 0 || rec >= n || seen[rec] {
				t.Fatalf("n=%d: rank %d maps to %d, taken or out of range", n, r, rec)
			}
			seen[rec] = true
		}
	}
}

func TestZipfFrequencies(t *testing.T) {
	const n, s, draws = 1000, 0.99, 200000
	z, err := NewZipf(n, s)
	if err != nil {
		t.Fatal(err)
	}
	var h float64
	for r := 1; r <= n; r++ {
		h += math.Pow(float64(r), -s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, n)
	for range draws {
		counts[z.Rank(rng)]++
	}
	for _, r := range []int{0, 1, 9, 99} {
		p := math.Pow(float64(r+1), -s) / h
		want, sd := p*draws, math.Sqrt(p*(1-p)*draws)
		if got := float64(counts[r]); math.Abs(got-want) > 5*sd {
			t.Errorf("rank %d drawn %v times, want %.0f ± %.0f", r, got, want, 5*sd)
		}
	}
	if got, want := z.Mass(1), 1/h; math.Abs(got-want) > 1e-12 {
		t.Errorf("Mass(1) = %g, want %g", got, want)
	}
	if z.Mass(0) != 0 || z.Mass(n) != 1 || z.Mass(2*n) != 1 {
		t.Errorf("Mass(0), Mass(n), Mass(2n) = %g, %g, %g; want 0, 1, 1", z.Mass(0), z.Mass(n), z.Mass(2*n))
	}
}

func TestZipfExponentZeroIsUniform(t *testing.T) {
	z, err := NewZipf(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= 4; r++ {
		if got := z.Mass(r); math.Abs(got-float64(r)/4) > 1e-12 {
			t.Errorf("Mass(%d) = %g, want %g", r, got, float64(r)/4)
		}
	}
}
