// Package benchmain is what every benchmark command does around its
// measurement, kept in one place so the commands differ only in what they
// measure: a log line stamped with the wall-clock time (runs are read
// beside steal and other tenants' load, which are timed too), a context
// that Ctrl-C ends so servers are stopped, not orphaned, a scratch
// directory, and the binaries compared, built when the user gave none.
package benchmain

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"time"

	"github.com/gocached/gocached/internal/refmc"
	"github.com/gocached/gocached/internal/testproc"
)

// Packages the commands build when no binary is given.
const (
	GocachedPkg = "github.com/gocached/gocached/cmd/gocached"
	MCLoadPkg   = "github.com/gocached/gocached/bench/cmd/mcload"
	// EpollFloorPkg is enginecmp's floor target.
	EpollFloorPkg = "github.com/gocached/gocached/bench/cmd/epollfloor"
	// UringFloorPkg is enginecmp's uring-floor target.
	UringFloorPkg = "github.com/gocached/gocached/bench/cmd/uringfloor"
)

// Logf writes one progress line to stderr, stamped with the time of day.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// Env is one command run's context and scratch directory.
type Env struct {
	Ctx  context.Context
	Dir  string // scratch: built binaries; removed by Close
	stop context.CancelFunc
}

// Start makes the scratch directory (named after the command) and a
// context ended by Ctrl-C and by the extra signals given.
func Start(name string, sigs ...os.Signal) (*Env, error) {
	dir, err := os.MkdirTemp("", name+"-")
	if err != nil {
		return nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), append([]os.Signal{os.Interrupt}, sigs...)...)
	return &Env{Ctx: ctx, Dir: dir, stop: stop}, nil
}

// Close ends the context and removes the scratch directory.
func (e *Env) Close() {
	e.stop()
	os.RemoveAll(e.Dir)
}

// Build builds the Go package pkg into the scratch directory unless *bin
// already names a binary, and sets *bin to it.
func (e *Env) Build(bin *string, pkg string) error {
	if *bin != "" {
		return nil
	}
	*bin = filepath.Join(e.Dir, path.Base(pkg))
	Logf("building %s", pkg)
	return testproc.GoBuild(e.Ctx, pkg, *bin)
}

// Memcached sets *bin to the reference memcached unless it names one
// already: built once from Debian's source package into the test cache.
func (e *Env) Memcached(bin *string) error {
	if *bin != "" {
		return nil
	}
	Logf("building memcached %s from Debian's source package (once; cached)", refmc.Current.Version)
	b, err := refmc.Current.Binary(e.Ctx)
	*bin = b
	return err
}
