package flash

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocached/gocached/bench"
)

// fakeClock advances only when the waiter sleeps.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }
func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.t = c.t.Add(d)
	return nil
}

// counterPoller returns the values in turn, then the last one for ever.
func counterPoller(vals ...int64) (poller, *int) {
	calls := 0
	return func() (int64, bool, error) {
		v := vals[min(calls, len(vals)-1)]
		calls++
		return v, true, nil
	}, &calls
}

var testSettle = Settle{Interval: 100 * time.Millisecond, Quiet: time.Second, Max: 10 * time.Second}

func TestSettleWaitsForQuiet(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	poll, _ := counterPoller(0, 10, 20, 30, 40, 40)
	res, err := testSettle.Wait(context.Background(), poll, clk.now, clk.sleep)
	if err != nil {
		t.Fatal(err)
	}
	// The counter last moved at the 4th poll (400 ms): settled a second later.
	if !res.Settled || res.Written != 40 || res.Waited != 1400*time.Millisecond {
		t.Errorf("got %+v, want settled at 40 after 1.4s", res)
	}
}

func TestSettleGivesUpAtMax(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	n := int64(0)
	poll := func() (int64, bool, error) { n++; return n, true, nil }
	res, err := testSettle.Wait(context.Background(), poll, clk.now, clk.sleep)
	if err != nil {
		t.Fatal(err)
	}
	if res.Settled || res.Waited != testSettle.Max {
		t.Errorf("got %+v, want unsettled after %v", res, testSettle.Max)
	}
}

func TestSettleIsBoundedWhenTheClockStands(t *testing.T) {
	frozen := time.Unix(1000, 0)
	n, sleeps := int64(0), 0
	poll := func() (int64, bool, error) { n++; return n, true, nil }
	sleep := func(context.Context, time.Duration) error { sleeps++; return nil }
	res, err := testSettle.Wait(context.Background(), poll, func() time.Time { return frozen }, sleep)
	if err != nil {
		t.Fatal(err)
	}
	if res.Settled || sleeps > 200 {
		t.Errorf("got %+v after %d sleeps; want a bounded, unsettled wait", res, sleeps)
	}
}

func TestSettleWithoutFlashTier(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	calls := 0
	poll := func() (int64, bool, error) { calls++; return 0, false, nil }
	res, err := testSettle.Wait(context.Background(), poll, clk.now, clk.sleep)
	if err != nil || !res.NoFlash || calls != 1 {
		t.Errorf("got %+v, %v after %d polls; want NoFlash at once", res, err, calls)
	}
}

func TestSettleStopsOnErrors(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	boom := errors.New("boom")
	calls := 0
	poll := func() (int64, bool, error) {
		calls++
		if calls > 2 {
			return 0, false, boom
		}
		return int64(calls), true, nil
	}
	if _, err := testSettle.Wait(context.Background(), poll, clk.now, clk.sleep); !errors.Is(err, boom) {
		t.Errorf("poll error: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p2, _ := counterPoller(1, 2, 3)
	if _, err := testSettle.Wait(ctx, p2, time.Now, bench.SleepCtx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}
