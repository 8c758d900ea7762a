package store

import (
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMain fails the package when a test leaves a goroutine behind: a
// store not closed keeps its background loop (and a page move) running.
func TestMain(m *testing.M) {
	testproc.VerifyMain(m)
}
