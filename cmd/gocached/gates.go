package main

import (
	"fmt"
	"log/slog"
	"os"
	"syscall"

	"github.com/gocached/gocached/internal/protocol"
)

// gateOptions are memcached's flags that switch protocol features on or
// off: -A -F -X -W -Y, the size-class shape -f -n, and -D.
type gateOptions struct {
	shutdown, noFlush, noDump, noWatch bool
	authFile                           string
	factor                             float64
	minChunk                           int
	delimiter                          byte // 0: -D not given
}

// setDelimiter reads -D: memcached takes the first character of its value.
func (g *gateOptions) setDelimiter(v string, given bool) error {
	if !given {
		return nil
	}
	if v == "" {
		return mcFail("No delimiter specified")
	}
	g.delimiter = v[0]
	return nil
}

// apply puts the gates into the Settings the Sessions obey.
func (g *gateOptions) apply(s *protocol.Settings) {
	s.ShutdownEnabled = g.shutdown
	s.FlushDisabled = g.noFlush
	s.DumpDisabled = g.noDump
	s.WatchDisabled = g.noWatch
	s.GrowthFactor = g.factor
	s.ChunkSize = g.minChunk
	s.DetailDelimiter = g.delimiter
}

// asciiAuth loads -Y's file, as memcached does at start.
func (g *gateOptions) asciiAuth() (*protocol.ASCIIAuth, error) {
	if g.authFile == "" {
		return nil, nil
	}
	a, err := protocol.LoadASCIIAuth(g.authFile)
	if err != nil {
		return nil, fmt.Errorf("-Y %s: %w", g.authFile, err)
	}
	return a, nil
}

// shutdownHook is what `shutdown` (enabled by -A) calls: it stops the
// process as a signal would, through the same graceful path (memcached
// raises SIGINT, or SIGUSR1 for `shutdown graceful`; both finish in-flight
// replies here).
func shutdownHook(log *slog.Logger) func(graceful bool) {
	return func(graceful bool) {
		sig := syscall.SIGINT
		if graceful {
			sig = syscall.SIGUSR1
		}
		log.Info("shutdown command received", "graceful", graceful)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Signal(sig)
		}
	}
}
