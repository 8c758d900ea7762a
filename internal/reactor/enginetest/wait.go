// Package enginetest holds what tests of the engines share: waiting for
// asynchronous engine state, and the conformance cases every engine must
// pass (see internal/reactor's conformance_test.go).
package enginetest

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test after 30 s: engine
// state (connection counts, closes) changes asynchronously to the client.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
