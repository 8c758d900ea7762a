//go:build linux

package uring

import (
	"runtime"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
)

// TestStopTheWorldWhileIdle: the reactors wait in io_uring_enter as a raw
// system call, holding their P; the runtime must still be able to stop
// the world (its preemption signal ends the wait with EINTR), so a GC with
// idle reactors takes milliseconds, not forever.
func TestStopTheWorldWhileIdle(t *testing.T) {
	needIOUring(t)
	enginetest.Start(t, New, reactor.Config{Threads: 2}, enginetest.Options{})
	time.Sleep(50 * time.Millisecond) // both reactors asleep in the kernel
	for range 5 {
		start := time.Now()
		done := make(chan struct{})
		go func() { runtime.GC(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("runtime.GC did not finish with idle reactors")
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("GC with idle reactors took %v", d)
		}
		t.Logf("GC took %v", time.Since(start))
	}
}
