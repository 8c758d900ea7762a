package bench

import "math"

// fbValueHead is the probability of each value size 0..14 bytes in the ETC
// trace; sizes from 15 bytes up follow fbValueTail.
var fbValueHead = [15]float64{
	.00536, .00047, .17820, .09239, .00018, .02740, .00065, .00606,
	.00023, .00837, .00837, .08989, .00092, .00326, .01980,
}

var fbValueTail = GPareto{Loc: 15.0, Scale: 214.476, Shape: 0.348238}

// fbValueHeadMass is the total probability of the discrete head.
var fbValueHeadMass = func() float64 {
	s := 0.0
	for _, p := range fbValueHead {
		s += p
	}
	return s
}()

// FBValue is the ETC value-size distribution: a discrete head for tiny
// values and a generalized Pareto tail.
type FBValue struct{}

func (FBValue) Quantile(p float64) float64 {
	c := 0.0
	for size, q := range fbValueHead {
		c += q
		if p < c {
			return float64(size)
		}
	}
	return fbValueTail.Quantile((p - fbValueHeadMass) / (1 - fbValueHeadMass))
}

func (FBValue) CDF(x float64) float64 {
	if x < 0 {
		return 0
	}
	if x < float64(len(fbValueHead)) {
		c := 0.0
		for size := 0; size <= int(math.Floor(x)); size++ {
			c += fbValueHead[size]
		}
		return c
	}
	return fbValueHeadMass + (1-fbValueHeadMass)*fbValueTail.CDF(x)
}

func (FBValue) Mean() float64 {
	m := 0.0
	for size, q := range fbValueHead {
		m += float64(size) * q
	}
	return m + (1-fbValueHeadMass)*fbValueTail.Mean()
}

func (FBValue) String() string { return "fb_value" }
