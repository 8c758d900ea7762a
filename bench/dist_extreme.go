package bench

import (
	"errors"
	"fmt"
	"math"
)

// eulerGamma is the Euler–Mascheroni constant, the Gumbel mean offset.
const eulerGamma = 0.57721566490153286

// GEV is the generalized extreme value distribution (location, scale,
// shape ξ); ξ = 0 is the Gumbel distribution.
type GEV struct{ Loc, Scale, Shape float64 }

func (g GEV) Quantile(p float64) float64 {
	l := -math.Log(p)
	if g.Shape == 0 {
		return g.Loc - g.Scale*math.Log(l)
	}
	return g.Loc + g.Scale*(math.Pow(l, -g.Shape)-1)/g.Shape
}

func (g GEV) CDF(x float64) float64 {
	z := (x - g.Loc) / g.Scale
	if g.Shape == 0 {
		return math.Exp(-math.Exp(-z))
	}
	t := 1 + g.Shape*z
	if t <= 0 {
		if g.Shape > 0 {
			return 0 // below the lower end point
		}
		return 1 // above the upper end point
	}
	return math.Exp(-math.Pow(t, -1/g.Shape))
}

func (g GEV) Mean() float64 {
	switch {
	case g.Shape == 0:
		return g.Loc + g.Scale*eulerGamma
	case g.Shape >= 1:
		return math.Inf(1)
	}
	return g.Loc + g.Scale*(math.Gamma(1-g.Shape)-1)/g.Shape
}

func (g GEV) String() string { return fmt.Sprintf("gev:%g,%g,%g", g.Loc, g.Scale, g.Shape) }

func (g GEV) validate() error {
	if !(g.Scale > 0) {
		return errors.New("gev: scale must be positive")
	}
	return nil
}

// GPareto is the generalized Pareto distribution (location, scale, shape ξ);
// ξ = 0 is the shifted exponential.
type GPareto struct{ Loc, Scale, Shape float64 }

func (g GPareto) Quantile(p float64) float64 {
	if g.Shape == 0 {
		return g.Loc - g.Scale*math.Log1p(-p)
	}
	return g.Loc + g.Scale*(math.Pow(1-p, -g.Shape)-1)/g.Shape
}

func (g GPareto) CDF(x float64) float64 {
	z := (x - g.Loc) / g.Scale
	if z <= 0 {
		return 0
	}
	if g.Shape == 0 {
		return -math.Expm1(-z)
	}
	t := 1 + g.Shape*z
	if t <= 0 {
		return 1 // beyond the upper end point (ξ < 0)
	}
	return 1 - math.Pow(t, -1/g.Shape)
}

func (g GPareto) Mean() float64 {
	if g.Shape >= 1 {
		return math.Inf(1)
	}
	return g.Loc + g.Scale/(1-g.Shape)
}

func (g GPareto) String() string {
	return fmt.Sprintf("pareto:%g,%g,%g", g.Loc, g.Scale, g.Shape)
}

func (g GPareto) validate() error {
	if !(g.Scale > 0) {
		return errors.New("pareto: scale must be positive")
	}
	return nil
}
