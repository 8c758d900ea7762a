package flash

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Zipf draws records 0..N-1 with P(rank r) proportional to 1/(r+1)^S, any
// S >= 0 (math/rand's Zipf needs S > 1; caches are usually measured near
// 0.99). Ranks are spread over the records by a fixed permutation, so the
// hot keys are not the ones the load phase wrote first or last: which keys
// stay in RAM and which went to flash is then independent of popularity.
type Zipf struct {
	cdf      []float64 // cdf[r] = P(rank <= r)
	mul, add uint64    // rank -> record: (rank*mul + add) mod N, mul coprime to N
}

// NewZipf builds the distribution over n records with exponent s.
func NewZipf(n int, s float64) (*Zipf, error) {
	if n < 1 || !(s >= 0) || math.IsInf(s, 1) {
		return nil, fmt.Errorf("zipf: %d records, exponent %g: want n >= 1 and a finite s >= 0", n, s)
	}
	z := &Zipf{cdf: make([]float64, n)}
	var sum float64
	for r := range n {
		sum += math.Pow(float64(r+1), -s)
		z.cdf[r] = sum
	}
	for r := range z.cdf {
		z.cdf[r] /= sum
	}
	z.cdf[n-1] = 1
	z.mul = uint64(float64(n)*0.6180339887) | 1
	for gcd(z.mul, uint64(n)) != 1 {
		z.mul++
	}
	z.add = uint64(n) / 3
	return z, nil
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Records is N.
func (z *Zipf) Records() int { return len(z.cdf) }

// Rank draws a rank (0 is the most popular).
func (z *Zipf) Rank(rng *rand.Rand) int {
	return min(sort.SearchFloat64s(z.cdf, rng.Float64()), len(z.cdf)-1)
}

// Record maps a rank to its record.
func (z *Zipf) Record(rank int) int {
	return int((uint64(rank)*z.mul + z.add) % uint64(len(z.cdf)))
}

// Next draws a record.
func (z *Zipf) Next(rng *rand.Rand) int { return z.Record(z.Rank(rng)) }

// Mass is the probability of the ranks below r: the hit ratio a cache that
// holds exactly the r most popular records would reach.
func (z *Zipf) Mass(r int) float64 {
	if r <= 0 {
		return 0
	}
	return z.cdf[min(r, len(z.cdf))-1]
}
