package uringsys

import (
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) { testproc.VerifyMain(m) }
