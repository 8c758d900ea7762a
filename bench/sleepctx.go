package bench

import (
	"context"
	"time"
)

// SleepCtx sleeps d, or less if ctx ends first (then it returns ctx's
// error): the one pause every bench phase takes, so an interrupt cuts a
// run short at once.
func SleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
