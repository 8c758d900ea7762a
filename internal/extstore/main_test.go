package extstore

import (
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMain fails the package when a test leaves a goroutine behind: an
// engine not closed keeps its writer and read workers running.
func TestMain(m *testing.M) {
	testproc.VerifyMain(m)
}
