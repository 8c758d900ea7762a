package server

import (
	"fmt"
	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/procctl"
	"io"
	"log/slog"
	"os"
	"syscall"

	"github.com/gocached/gocached/internal/protocol"
)

// loadASCIIAuth loads -Y's file, as memcached does at start: read as the -u
// user (memcached reads it after dropping root), its failures reported
// first with memcached's lines on stderr.
func loadASCIIAuth(g *config.Gates, p *procctl.Process, stderr io.Writer) (*protocol.ASCIIAuth, error) {
	if g.AuthFile == "" {
		return nil, nil
	}
	data, err := p.ReadAsUser(g.AuthFile)
	if err != nil {
		reason := procctl.ErrnoText(err)
		fmt.Fprintf(stderr, "Could not open authfile [%s] for reading, error %s: %s\n", g.AuthFile, reason, reason)
		return nil, fmt.Errorf("-Y %s: %w", g.AuthFile, err)
	}
	a, err := protocol.NewASCIIAuth(g.AuthFile, data)
	if err != nil {
		fmt.Fprintf(stderr, "Authfile [%s] has a malformed entry. Should be 'user:password'\n", g.AuthFile)
		return nil, fmt.Errorf("-Y %s: %w", g.AuthFile, err)
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
