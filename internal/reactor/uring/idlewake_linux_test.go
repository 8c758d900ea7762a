//go:build linux

package uring

import (
	"strconv"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
)

// TestIdleReactorWaitsForItsCompletion: a reactor with nothing to do sleeps
// in io_uring_enter without a timeout and is woken by the completion
// itself, in each of the ways its loop waits: right after a reply (a raw
// wait, holding its P), after sysmon's preemption signal ended such a wait
// (the next one goes through the runtime), and after a long idle stretch.
// A completion the wait failed to notice would leave the request
// unanswered until the read deadline, since nothing else wakes the loop;
// a wait with a timeout would show as empty enters while idle. (Issue 31
// asked whether uring's tail at low load came from either; it did not, see
// docs/architecture.md.)
func TestIdleReactorWaitsForItsCompletion(t *testing.T) {
	needIOUring(t)
	s := enginetest.Start(t, New, reactor.Config{Threads: 1}, enginetest.Options{})
	c := s.Dial(t)
	emptyEnters := func() int {
		n, err := strconv.Atoi(c.Stats("reactors")["reactor:0:empty_enters"])
		if err != nil {
			t.Fatalf("reactor:0:empty_enters: %v", err)
		}
		return n
	}
	for _, tc := range []struct {
		name string
		idle time.Duration // quiet time before the request
	}{
		{"right after a reply", 0},
		{"after sysmon ended the raw wait", 40 * time.Millisecond},
		{"after a long idle stretch", time.Second},
	} {
		before := emptyEnters() // the stats reply: the reactor's next wait is a raw one
		time.Sleep(tc.idle)     // the condition under test, not a wait for state
		_ = c.NC.SetReadDeadline(time.Now().Add(10 * time.Second))
		c.Send("version\r\n")
		if l := c.Line(); len(l) < 8 || l[:8] != "VERSION " {
			t.Fatalf("%s: reply %q", tc.name, l)
		}
		// At most one wake without work per quiet stretch: the preemption
		// signal that ends a raw wait (the wait after it is not signalled).
		// Allow a few for the runtime's other signals; a 100 ms timeout
		// would already wake ten times in the long stretch.
		if woke := emptyEnters() - before; woke > 4 {
			t.Errorf("%s: the reactor woke %d times with nothing to reap in %v of quiet: its wait has a timeout", tc.name, woke, tc.idle)
		}
	}
}
