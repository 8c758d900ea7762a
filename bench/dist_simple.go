package bench

import (
	"errors"
	"fmt"
	"math"
)

// Fixed always yields Value.
type Fixed struct{ Value float64 }

func (f Fixed) Quantile(float64) float64 { return f.Value }
func (f Fixed) Mean() float64            { return f.Value }
func (f Fixed) String() string           { return fmt.Sprintf("fixed:%g", f.Value) }
func (f Fixed) CDF(x float64) float64 {
	if x < f.Value {
		return 0
	}
	return 1
}

// Uniform is uniform on [Min, Max].
type Uniform struct{ Min, Max float64 }

func (u Uniform) Quantile(p float64) float64 { return u.Min + p*(u.Max-u.Min) }
func (u Uniform) Mean() float64              { return (u.Min + u.Max) / 2 }
func (u Uniform) String() string             { return fmt.Sprintf("uniform:%g,%g", u.Min, u.Max) }
func (u Uniform) CDF(x float64) float64 {
	switch {
	case x < u.Min:
		return 0
	case x >= u.Max:
		return 1
	}
	return (x - u.Min) / (u.Max - u.Min)
}
func (u Uniform) validate() error {
	if u.Max < u.Min {
		return errors.New("uniform: max below min")
	}
	return nil
}

// Normal is the normal distribution.
type Normal struct{ MeanValue, SD float64 }

func (n Normal) Quantile(p float64) float64 {
	return n.MeanValue + n.SD*math.Sqrt2*math.Erfinv(2*p-1)
}
func (n Normal) CDF(x float64) float64 {
	return 0.5 * math.Erfc(-(x-n.MeanValue)/(n.SD*math.Sqrt2))
}
func (n Normal) Mean() float64  { return n.MeanValue }
func (n Normal) String() string { return fmt.Sprintf("normal:%g,%g", n.MeanValue, n.SD) }
func (n Normal) validate() error {
	if !(n.SD > 0) {
		return errors.New("normal: sd must be positive")
	}
	return nil
}

// Exponential has rate Rate (mean 1/Rate): Poisson arrivals.
type Exponential struct{ Rate float64 }

func (e Exponential) Quantile(p float64) float64 { return -math.Log1p(-p) / e.Rate }
func (e Exponential) Mean() float64              { return 1 / e.Rate }
func (e Exponential) String() string             { return fmt.Sprintf("exponential:%g", e.Rate) }
func (e Exponential) CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return -math.Expm1(-e.Rate * x)
}
func (e Exponential) validate() error {
	if !(e.Rate > 0) {
		return errors.New("exponential: rate must be positive")
	}
	return nil
}
