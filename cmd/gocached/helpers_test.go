package main

import (
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// syncBuffer collects a child's log lines while tests read them.
type syncBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *syncBuffer) WriteLine(s string) {
	b.mu.Lock()
	b.lines = append(b.lines, s)
	b.mu.Unlock()
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// skipMissing skips a test whose requirement (root, a tool, a user) this
// machine lacks, and fails it instead under GOCACHED_REQUIRE_TESTBED=1, as CI
// runs, where nothing may be missing.
func skipMissing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("GOCACHED_REQUIRE_TESTBED") == "1" {
		t.Fatalf(format+" (GOCACHED_REQUIRE_TESTBED=1)", args...)
	}
	t.Skipf(format, args...)
}

// readStats reads `stats GROUP` ("" for plain stats) on nc, failing the test on
// any error.
func readStats(t *testing.T, nc net.Conn, group string) map[string]string {
	t.Helper()
	vals, err := testproc.Stats(nc, group)
	if err != nil {
		t.Fatal(err)
	}
	return vals
}
