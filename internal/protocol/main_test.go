package protocol

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// TestMain keeps the Session's -v lines (invalid binary requests, which the
// tests and fuzz targets send by the thousand) out of the test output.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}
