package reactor

import (
	"testing"
	"time"
)

// TestYielderSpacing: a yield at the first call, then none until
// YieldEvery has passed since the last one.
func TestYielderSpacing(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var y Yielder
	for _, step := range []struct {
		at   time.Duration
		want time.Duration // y.last after the call, relative to t0
	}{
		{0, 0},
		{YieldEvery / 2, 0},
		{YieldEvery - time.Nanosecond, 0},
		{YieldEvery, YieldEvery},
		{YieldEvery + YieldEvery/2, YieldEvery},
		{3 * YieldEvery, 3 * YieldEvery},
	} {
		y.Maybe(t0.Add(step.at))
		if got := y.last.Sub(t0); got != step.want {
			t.Errorf("after Maybe(t0+%v): last yield at t0+%v, want t0+%v", step.at, got, step.want)
		}
	}
}
