package testproc

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// VerifyMain is every test package's TestMain body: it runs the tests,
// then the cleanups given (in order), and fails the package when a
// goroutine a test started is still running at the end (goleak). A
// goroutine left behind is a store, server, connection or timer a test did
// not release: on a loaded machine they pile up and slow every later test.
//
// Goroutines every test binary has (the runtime's, the testing package's,
// the race detector's) are not counted; a package with a goroutine that
// rightly lives for the whole binary (a process-wide worker started once)
// names its top function in ignore.
func VerifyMain(m *testing.M, cleanups ...func()) {
	VerifyMainIgnoring(m, nil, cleanups...)
}

// VerifyMainIgnoring is VerifyMain that also accepts goroutines whose top
// function is one of ignore (package-qualified, as goleak prints them).
func VerifyMainIgnoring(m *testing.M, ignore []string, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	if code == 0 {
		opts := []goleak.Option{
			// The Cmd spawner: one goroutine locked to its thread for
			// the life of the binary, by design.
			goleak.IgnoreTopFunction("github.com/gocached/gocached/internal/testproc.spawn.func1.1"),
		}
		for _, fn := range ignore {
			opts = append(opts, goleak.IgnoreTopFunction(fn))
		}
		if err := goleak.Find(opts...); err != nil {
			os.Stderr.WriteString("goleak: goroutines left running after the tests:\n" + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
