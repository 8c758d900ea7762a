package reactor

import (
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMain fails the package when a test leaves a goroutine behind: an
// engine, connection or listener not released at the test's end.
func TestMain(m *testing.M) { testproc.VerifyMain(m) }
