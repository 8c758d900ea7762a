//go:build linux

package uring

import (
	"runtime"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
)

// TestStopTheWorldWhileIdle: a reactor that just served a request waits in
// io_uring_enter as a raw system call, holding its P; the runtime must
// still be able to stop the world (its preemption signal ends the wait
// with EINTR), so a GC right then takes milliseconds, not forever. Later
// the reactor, idle, waits through the runtime; that GC must be quick too.
func TestStopTheWorldWhileIdle(t *testing.T) {
	needIOUring(t)
	s := enginetest.Start(t, New, reactor.Config{Threads: 1}, enginetest.Options{})
	c := s.Dial(t)
	for i := range 6 {
		c.Send("version\r\n")
		c.Line() // the reactor's next wait is a raw one
		if i == 5 {
			// sysmon ends a raw wait within 10 ms; the reactor, having
			// found nothing, then waits through the runtime.
			time.Sleep(50 * time.Millisecond)
		}
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
