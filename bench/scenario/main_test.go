package scenario

import (
	"os"
	"sync"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMain fails the package when a test leaves a goroutine running, and
// removes the binaries the testbed tests built.
func TestMain(m *testing.M) { testproc.VerifyMain(m, removeBuilds) }

// mcloadBin is the load generator, built once for the package's tests
// (each Run would otherwise build it and gocached again: tens of seconds
// each on a loaded machine).
var mcloadBin struct {
	once      sync.Once
	dir, path string
	err       error
}

// removeBuilds removes what prebuilt built; TestMain calls it last.
func removeBuilds() {
	testproc.Cleanup()
	if mcloadBin.dir != "" {
		os.RemoveAll(mcloadBin.dir)
	}
}
