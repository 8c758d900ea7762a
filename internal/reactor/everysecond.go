package reactor

import (
	"sync/atomic"
	"time"
)

// EverySecond lets a repeated event through at most once a second, for
// logs of failures that retry quickly (an accept out of descriptors
// retries every 10 ms). The zero value is ready; safe for concurrent use.
type EverySecond struct{ last atomic.Int64 }

// Allow reports whether the event may be logged now.
func (e *EverySecond) Allow() bool {
	now := time.Now().Unix()
	last := e.last.Load()
	return now != last && e.last.CompareAndSwap(last, now)
}
