package main

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
		var n atomic.Uint64
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan bool)
		go func() {
			done <- cutWhenStill(ctx, n.Load, 300*time.Millisecond, 5*time.Millisecond, func() {})
		}()
		// Output grows every 10 ms for 600 ms: twice the stillness bound.
		for range 60 {
			n.Add(1)
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if <-done {
			t.Fatal("cut while output was still going out")
		}
	})
}
