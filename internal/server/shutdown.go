package server

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/napi/pollmode"
	"github.com/gocached/gocached/internal/procctl"
)

// shutdownGrace bounds how long SIGINT/SIGTERM waits for in-flight replies
// before connections are closed regardless.
const shutdownGrace = 10 * time.Second

// runUntilStopped serves until a signal (or the engine's failure), then
// shuts down: replies in flight finish, the knobs are restored, and a
// graceful stop saves -e's cache.
func (s *server) runUntilStopped() (status int) {
	o, log, eng := s.o, s.log, s.eng
	served := make(chan error, 1)
	go func() { served <- eng.Serve() }()
	procctl.NotifyDaemonParent() // -d: the parent exits now, the server listens
	log.Info("gocached serving", "addr", eng.Addr().String(), "engine", o.Engine, "threads", eng.Threads(),
		"version", s.build.Version, "build", s.build.Label, "poll_mode", pollModeLabel(o))

	stopAuto := pollmode.StartAutoTuner(o, s.napi, eng, log)
	graceful := false
	select {
	case err := <-served:
		log.Error("engine stopped", "err", err)
		served <- err
		status = 1
	case <-s.stopped.Done():
		log.Info("signal received; shutting down")
		graceful = s.heardGraceful()
	}
	s.stopSignals() // a second signal now terminates at once
	stopAuto()      // before the knobs are restored
	s.drain()
	if err := <-served; err != nil && status == 0 {
		log.Error("engine stopped with an error", "err", err)
		status = 1
	}
	if err := s.napi.Restore(); err != nil {
		log.Error("NAPI knobs not restored", "err", err)
		status = 1
	}
	saveMemoryFile(o, s.st, graceful, log)
	log.Info("stopped")
	return status
}

// heardGraceful reports whether the stop was SIGUSR1, and prints
// memcached's line on its way out.
func (s *server) heardGraceful() bool {
	graceful := false
	// Both channels hear SIGUSR1, in an order the runtime picks.
	select {
	case <-s.gracefulStop:
		graceful = true
	case <-time.After(50 * time.Millisecond):
	}
	if graceful {
		fmt.Fprintln(s.stderr, "Gracefully stopping")
	} else if s.settings.Verbosity.Load() > 0 { // memcached reads the level `verbosity` last set
		fmt.Fprintln(s.stderr, "Exiting normally")
	}
	return graceful
}

// drain stops the engine, letting replies in flight finish for up to
// shutdownGrace; clients whose replies stopped moving are cut sooner.
func (s *server) drain() {
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var stalled atomic.Bool
	go func() {
		written := func() uint64 { return s.eng.ServerStats().BytesWritten }
		cutWhenStill(sctx, written, stopStillFor, stopCheckEvery, func() { stalled.Store(true); cancel() })
	}()
	if err := s.eng.Shutdown(sctx); err != nil {
		if stalled.Load() {
			s.log.Info("clients whose replies had not moved for a second were cut", "after", stopStillFor)
		} else {
			s.log.Warn("shutdown did not finish cleanly", "err", err)
		}
	}
}
