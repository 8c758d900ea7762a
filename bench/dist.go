// Package bench is a mutilate-class load generator for memcached-protocol
// servers: distributions of key sizes, value sizes and inter-arrival times,
// an open- and closed-loop request engine over the text protocol, and the
// report formats the scenario runner consumes.
package bench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Distribution is a one-dimensional probability distribution. Every
// distribution is sampled by inverse transform (Quantile of a uniform
// number), so one uniform number always maps to the same value: that is what
// lets a key's size depend on the key alone.
type Distribution interface {
	// Quantile is the inverse CDF; p is in [0, 1).
	Quantile(p float64) float64
	// CDF is P(X <= x).
	CDF(x float64) float64
	// Mean is the analytic mean (+Inf when it does not exist).
	Mean() float64
	// String is the spec that Parse turns back into this distribution.
	String() string
}

// Sample draws one value of d using r.
func Sample(d Distribution, r *rand.Rand) float64 { return d.Quantile(r.Float64()) }

// The Facebook "ETC" workload of Atikoglu et al., "Workload Analysis of a
// Large-Scale Key-Value Store", SIGMETRICS 2012, as used by mutilate and by
// the IRQ-suspension series' evaluation.
var (
	FBKey = GEV{Loc: 30.7984, Scale: 8.20449, Shape: 0.078688}
	FBIA  = GPareto{Loc: 0, Scale: 16.0292, Shape: 0.154971}
)

// ParseDistribution turns a mutilate-style spec into a Distribution:
//
//	N | fixed:N                 always N
//	uniform:MAX                 uniform on [0, MAX]
//	uniform:A-B | uniform:A,B   uniform on [A, B]
//	normal:MEAN,SD
//	exponential[:LAMBDA]        rate LAMBDA (default 1)
//	pareto:LOC,SCALE,SHAPE      generalized Pareto
//	gev:LOC,SCALE,SHAPE         generalized extreme value
//	fb_key | fb_value | fb_ia   the ETC workload
func ParseDistribution(spec string) (Distribution, error) {
	name, args, _ := strings.Cut(strings.TrimSpace(spec), ":")
	if v, err := strconv.ParseFloat(name, 64); err == nil && args == "" {
		return Fixed{Value: v}, nil
	}
	var params []float64
	if args != "" {
		sep := ","
		if name == "uniform" && !strings.Contains(args, ",") && strings.Index(args, "-") > 0 {
			sep = "-"
		}
		for _, f := range strings.Split(args, sep) {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("distribution %q: parameter %q: %w", spec, f, err)
			}
			params = append(params, v)
		}
	}
	want := func(n ...int) error {
		for _, k := range n {
			if len(params) == k {
				return nil
			}
		}
		return fmt.Errorf("distribution %q: %s takes %v parameters, got %d", spec, name, n, len(params))
	}
	var d Distribution
	switch name {
	case "fixed":
		if err := want(1); err != nil {
			return nil, err
		}
		d = Fixed{Value: params[0]}
	case "uniform":
		if err := want(1, 2); err != nil {
			return nil, err
		}
		if len(params) == 1 {
			params = []float64{0, params[0]}
		}
		d = Uniform{Min: params[0], Max: params[1]}
	case "normal":
		if err := want(2); err != nil {
			return nil, err
		}
		d = Normal{MeanValue: params[0], SD: params[1]}
	case "exponential":
		if err := want(0, 1); err != nil {
			return nil, err
		}
		lambda := 1.0
		if len(params) == 1 {
			lambda = params[0]
		}
		d = Exponential{Rate: lambda}
	case "pareto":
		if err := want(3); err != nil {
			return nil, err
		}
		d = GPareto{Loc: params[0], Scale: params[1], Shape: params[2]}
	case "gev":
		if err := want(3); err != nil {
			return nil, err
		}
		d = GEV{Loc: params[0], Scale: params[1], Shape: params[2]}
	case "fb_key", "fb_value", "fb_ia":
		if err := want(0); err != nil {
			return nil, err
		}
		switch name {
		case "fb_key":
			return FBKey, nil
		case "fb_value":
			return FBValue{}, nil
		}
		return FBIA, nil
	default:
		return nil, fmt.Errorf("distribution %q: unknown kind %q", spec, name)
	}
	if v, ok := d.(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			return nil, fmt.Errorf("distribution %q: %w", spec, err)
		}
	}
	return d, nil
}

// Scaled multiplies every value of D by Factor; the open loop uses it to
// stretch an inter-arrival distribution to the target rate.
type Scaled struct {
	D      Distribution
	Factor float64
}

func (s Scaled) Quantile(p float64) float64 { return s.Factor * s.D.Quantile(p) }
func (s Scaled) CDF(x float64) float64      { return s.D.CDF(x / s.Factor) }
func (s Scaled) Mean() float64              { return s.Factor * s.D.Mean() }
func (s Scaled) String() string             { return fmt.Sprintf("%s*%g", s.D, s.Factor) }

// ScaleToMean returns d stretched so that its mean is mean.
func ScaleToMean(d Distribution, mean float64) (Distribution, error) {
	m := d.Mean()
	if !(m > 0) || m > 1e300 {
		return nil, fmt.Errorf("distribution %s: mean %g cannot be scaled to a rate", d, m)
	}
	return Scaled{D: d, Factor: mean / m}, nil
}
