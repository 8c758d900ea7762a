package protocol

import (
	"io"
	"log/slog"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMain keeps the Session's -v lines (invalid binary requests, which the
// tests and fuzz targets send by the thousand) out of the test output, and
// fails the package when a test leaves a goroutine behind (a store's
// background loop, a serving goroutine, a watcher).
//
// The longest tests (the split-at-every-byte and differential ones) call
// t.Parallel: each builds its own stores and memcached, and they run after
// the sequential tests, which include the allocation counts
// (testing.AllocsPerRun) and the one that swaps slog's default logger.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	testproc.VerifyMain(m)
}
