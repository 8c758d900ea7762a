package flash

import (
	"context"
	"time"
)

// Settle bounds the wait for the server's flash writes to stop.
type Settle struct {
	Interval time.Duration // between polls
	Quiet    time.Duration // the counter must stay still this long
	Max      time.Duration // give up waiting after this long
}

// SettleResult says how the wait ended.
type SettleResult struct {
	Written int64         // extstore_objects_written at the end
	Waited  time.Duration // from the first poll to the end
	Settled bool          // the counter stood still for Quiet
	NoFlash bool          // the server reports no extstore_objects_written
}

// poller reads extstore_objects_written; ok is false when the server has no
// such counter.
type poller func() (written int64, ok bool, err error)

// Wait polls until the written counter has not moved for Quiet, at most Max
// (then Settled is false), the server has no such counter, or ctx ends.
// memcached's writer thread sleeps up to a second between passes, so Quiet
// should be a few seconds.
func (s Settle) Wait(ctx context.Context, poll poller, now func() time.Time, sleep func(context.Context, time.Duration) error) (SettleResult, error) {
	start := now()
	last, ok, err := poll()
	if err != nil {
		return SettleResult{}, err
	}
	if !ok {
		return SettleResult{NoFlash: true}, nil
	}
	stillSince := start
	for polls := 0; ; polls++ {
		t := now()
		if t.Sub(stillSince) >= s.Quiet {
			return SettleResult{Written: last, Waited: t.Sub(start), Settled: true}, nil
		}
		// The count bound backs the time bound against a clock that stands still.
		if t.Sub(start) >= s.Max || polls > int(s.Max/max(s.Interval, time.Millisecond))+1 {
			return SettleResult{Written: last, Waited: t.Sub(start)}, nil
		}
		if err := sleep(ctx, s.Interval); err != nil {
			return SettleResult{Written: last, Waited: now().Sub(start)}, err
		}
		n, _, err := poll()
		if err != nil {
			return SettleResult{Written: last, Waited: now().Sub(start)}, err
		}
		if n != last {
			last, stillSince = n, now()
		}
	}
}
