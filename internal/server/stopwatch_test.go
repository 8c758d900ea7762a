package server

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestCutWhenStill(t *testing.T) {
	t.Run("still output is cut", func(t *testing.T) {
		var n atomic.Uint64
		cuts := 0
		if !cutWhenStill(context.Background(), n.Load, 50*time.Millisecond, 5*time.Millisecond, func() { cuts++ }) || cuts != 1 {
			t.Fatalf("frozen output: cut %d times, want once", cuts)
		}
	})
	t.Run("moving output is not cut", func(t *testing.T) {
		// Output that has grown at every look is never still, however
		// late the looks come: the check is driven by the looks, not by
		// a writer racing the ticker.
		const looks = 120 // twice the stillness bound at one look per period
		var n atomic.Uint64
		enough := make(chan struct{})
		written := func() uint64 {
			if n.Add(1) == looks {
				close(enough)
			}
			return n.Load()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan bool)
		go func() {
			done <- cutWhenStill(ctx, written, 300*time.Millisecond, 5*time.Millisecond, func() {})
		}()
		select {
		case <-enough:
		case cut := <-done:
			cancel()
			t.Fatalf("returned %v after %d looks while output was still going out", cut, n.Load())
		}
		cancel()
		if <-done {
			t.Fatal("cut while output was still going out")
		}
	})
}
