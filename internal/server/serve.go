// Package server assembles and runs gocached: the store, the engine and
// its listeners, the NAPI poll mode and the process hand-over, as a
// sequence of start-up steps (Serve), and the shutdown that undoes them.
package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/procctl"
)

// Build names the program for the protocol's `version`, the logs and
// `stats gocached`.
type Build struct {
	Version string // memcached's version gocached follows, as memcached writes it ("1.6.45")
	Label   string // the build's name (-ldflags); "" when none
}

// Serve runs the server until SIGINT, SIGTERM, SIGUSR1 or `shutdown` and
// returns the process's exit status. The start is a sequence of steps; the
// first that fails ends it with its status (memcached's, where memcached
// has one), and whatever the steps before it started is stopped, in
// reverse order, on the way out.
func Serve(o *config.Options, build Build, log *slog.Logger, stderr io.Writer) (status int) {
	s := &server{o: o, build: build, log: log, stderr: stderr, proc: (*procctl.Process)(&o.Proc)}
	defer func() { status = s.unwind(status) }()
	steps := []func() error{
		s.prepare,        // -k, the -o log lines, -e's file
		s.buildStore,     // the cache, warm from -e's file when it can be
		s.loadAuth,       // -S, -Z, -Y
		s.catchSignals,   // before any knob is written
		s.applyPollMode,  // --poll-mode's NAPI knobs
		s.startEngine,    // TCP and UNIX listeners, reactors
		s.startListeners, // metrics, UDP, the port file
		s.dropRoot,       // -u, then the pid file
		s.startHelpers,   // memory return, --cpuprofile
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return exitStatusOf(err)
		}
	}
	return s.runUntilStopped()
}

// exit ends the start with a status; the step has said why.
type exit int

func (e exit) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func exitStatusOf(err error) int {
	var e exit
	if errors.As(err, &e) {
		return int(e)
	}
	return 1
}

// cannotStart logs why a step failed, as every step does without a line
// of memcached's to print, and ends the start with status 1.
func (s *server) cannotStart(err error) error {
	s.log.Error("cannot start", "err", err)
	return exit(1)
}

// atExit keeps f to run on the way out, after the steps after it.
func (s *server) atExit(f func()) { s.undo = append(s.undo, f) }

// unwind runs what atExit kept, last first, and returns the exit status,
// which a failed restore of the NAPI knobs turns into 1.
func (s *server) unwind(status int) int {
	s.status = status
	for i := len(s.undo) - 1; i >= 0; i-- {
		s.undo[i]()
	}
	return s.status
}
