package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/napi/pollmode"
	"github.com/gocached/gocached/internal/procctl"
)

// prepare applies -k, says what each -o does here, and opens -e's file as
// the -u user would, before anything is built.
func (s *server) prepare() error {
	o, log := s.o, s.log
	slog.SetDefault(log)
	s.proc.Prepare(log)
	o.Ext.Log(log)
	if o.NAPIIDs > 0 {
		log.Info("-N is accepted for memcached compatibility; the epoll engine finds NAPI IDs itself", "napi_ids", o.NAPIIDs)
	}
	if err := s.proc.PrepareMemoryFile(o.MemoryFile); err != nil {
		if errors.Is(err, procctl.ErrMemoryFileOpen) {
			fmt.Fprintln(s.stderr, err) // memcached's line, first
		}
		return s.cannotStart(err)
	}
	return nil
}

// loadAuth reads what clients authenticate or encrypt with: -S's SASL
// setup, -Z's certificates, -Y's file.
func (s *server) loadAuth() error {
	var err error
	if s.sasl, err = saslConfig(s.o, s.log, s.stderr); err != nil {
		return s.cannotStart(err)
	}
	if s.tlsConfig, s.tlsSettings, err = loadTLS(&s.o.TLS, s.log); err != nil {
		var le *tlsLoadError
		if errors.As(err, &le) {
			fmt.Fprintln(s.stderr, le.memcachedLine()) // memcached's line, first, and its EX_USAGE
			s.cannotStart(err)
			return exit(config.ExitUsage)
		}
		return s.cannotStart(err)
	}
	if s.asciiAuth, err = loadASCIIAuth(&s.o.Gates, s.proc, s.stderr); err != nil {
		return s.cannotStart(err)
	}
	return nil
}

// catchSignals runs before any knob is written, so that a SIGTERM during
// start-up still restores them. As in memcached, SIGUSR1 is a graceful
// stop too, and SIGHUP reloads -Z's certificate (ignored without -Z).
func (s *server) catchSignals() error {
	signal.Ignore(syscall.SIGHUP)
	s.reloadCertsOnHangup()
	// A closed stderr (its reader gone while -vv logs) must not kill the
	// server: writes then fail with EPIPE instead.
	signal.Ignore(syscall.SIGPIPE)
	s.stopped, s.stopSignals = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	s.atExit(s.stopSignals)
	// With -e only a graceful stop (SIGUSR1, `shutdown graceful`) saves
	// the cache for the next start, as in memcached.
	s.gracefulStop = make(chan os.Signal, 1)
	signal.Notify(s.gracefulStop, syscall.SIGUSR1)
	s.atExit(func() { signal.Stop(s.gracefulStop) })
	return nil
}

// applyPollMode writes --poll-mode's knobs; they are restored on the way
// out whatever ends the run, and a failed restore fails the exit status.
func (s *server) applyPollMode() error {
	ns, err := pollmode.Start(s.o, s.log)
	if err != nil {
		return s.cannotStart(err)
	}
	s.napi = ns
	s.atExit(ns.Close)
	s.atExit(func() {
		if err := ns.Restore(); err != nil {
			s.log.Error("NAPI knobs not restored", "err", err)
			s.status = 1
		}
	})
	return nil
}

// dropRoot hands over to -u's user what memcached, already that user,
// would have created, drops root now that the listeners are bound and
// the knobs set, and writes the pid file, then the port file.
func (s *server) dropRoot() error {
	o := s.o
	err := s.proc.HandOver(o.Reactor.UnixSocket)
	if err == nil {
		var privileged func(func() error) error
		if privileged, err = s.proc.DropPrivileges(s.log, s.napi.KeptStatePath()); privileged != nil {
			s.napi.Privileged = privileged
		}
	}
	if err != nil {
		if errors.Is(err, procctl.ErrNoUser) {
			fmt.Fprintf(s.stderr, "can't find the user %s to switch to\n", o.Proc.User) // memcached's line, first
		}
		s.log.Error("cannot start", "err", err)
		s.shutdownEngine()
		if errors.Is(err, procctl.ErrNoUser) {
			return exit(67) // memcached's EX_NOUSER
		}
		return exit(1)
	}
	s.atExit(s.proc.WritePidFile(s.log))
	s.announcePorts() // as the user, as memcached (already that user) writes it
	return nil
}

// startHelpers starts what runs beside the engine: the return of a
// burst's buffers to the OS (memreturn.go) and --cpuprofile.
func (s *server) startHelpers() error {
	stopReturn := make(chan struct{})
	r := &memReturner{period: returnPeriod, indexBytes: func() uint64 { return s.st.Stats().HashBytes }}
	go r.run(stopReturn)
	s.atExit(func() { close(stopReturn) })
	stopProfile, err := startCPUProfile(s.o.CPUProfile)
	if err != nil {
		return s.cannotStart(err)
	}
	s.atExit(stopProfile)
	return nil
}
