package main

import (
	"fmt"
	"io"
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

// asciiAuth loads -Y's file, as memcached does at start: read as the -u
// user (memcached reads it after dropping root), its failures reported
// first with memcached's lines on stderr.
func (g *gateOptions) asciiAuth(p *processOptions, stderr io.Writer) (*protocol.ASCIIAuth, error) {
	if g.authFile == "" {
		return nil, nil
	}
	data, err := p.readAsUser(g.authFile)
	if err != nil {
		reason := errnoText(err)
		fmt.Fprintf(stderr, "Could not open authfile [%s] for reading, error %s: %s\n", g.authFile, reason, reason)
		return nil, fmt.Errorf("-Y %s: %w", g.authFile, err)
	}
	a, err := protocol.NewASCIIAuth(g.authFile, data)
	if err != nil {
		fmt.Fprintf(stderr, "Authfile [%s] has a malformed entry. Should be 'user:password'\n", g.authFile)
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
