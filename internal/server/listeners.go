package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/metrics"
	"github.com/gocached/gocached/internal/procctl"
	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// startListeners starts what listens beside the engine, before root is
// dropped: --metrics-listen and -U's UDP sockets; then, with -o
// no_maxconns_fast, it bounds the descriptors to -c.
func (s *server) startListeners() error {
	o, log := s.o, s.log
	stopMetrics, err := startMetrics(o.MetricsListen, s.env, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		s.shutdownEngine()
		return exit(1)
	}
	s.atExit(stopMetrics)
	udp, err := startUDP(o, s.eng.Threads(), s.cfg.NewSession, log)
	if err != nil {
		s.shutdownEngine()
		if reportListenFailure(s.stderr, log, o, err) {
			return exit(listenFailureStatus)
		}
		return s.cannotStart(err)
	}
	if u, ok := udp.(*reactor.UDPServer); ok {
		s.udpConns.Store(u)
	}
	s.udp = udp
	s.atExit(func() { udp.Close() })
	if o.Verbosity >= 2 {
		announceListeners(s.env.VerboseLog, s.eng, s.settings.BindingProtocol, udp)
	}
	if !o.Ext.Tuning.MaxConnsFast {
		if err := procctl.LimitDescriptorsToClients(o.Reactor.MaxConns); err != nil {
			log.Warn("-o no_maxconns_fast: cannot bound descriptors to -c; clients beyond it are served", "err", err)
		}
	}
	return nil
}

// startUDP serves -U on the -l addresses, for every engine alike, with a
// descriptor per thread (the `threads` stat) on each socket as memcached
// has; -s turns networking off, UDP included, as in memcached. The result
// is never nil.
func startUDP(o *config.Options, threads int, newSession func() reactor.Session, log *slog.Logger) (io.Closer, error) {
	if o.UDPPort == 0 || o.Reactor.UnixSocket != "" {
		return io.NopCloser(nil), nil
	}
	u, err := reactor.ListenUDP(o.Reactor.Listen, max(o.UDPPort, 0), threads, o.Reactor.SocketMark, newSession) // -1: a free port
	if err != nil {
		return nil, err
	}
	go u.Serve()
	log.Info("serving UDP", "addr", u.Addr().String())
	return u, nil
}

// startMetrics serves Prometheus metrics on addr (--metrics-listen) until
// the returned stop is called; with addr empty nothing listens. The port is
// bound here, before privileges are dropped, so a bind error stops the start.
func startMetrics(addr string, env *protocol.Env, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := metrics.ServeListener(ctx, l, metrics.SessionSource(env)); err != nil {
			log.Error("metrics endpoint stopped", "err", err)
		}
	}()
	log.Info("serving metrics", "addr", l.Addr().String())
	return func() { cancel(); <-done }, nil
}

// announcePorts writes memcached's port file (MEMCACHED_PORT_FILENAME),
// only for TCP/UDP listeners as memcached does: with -s, none (and no
// empty file). It comes last in the start, after the pid file: a test
// harness (memcached's t/ suite) takes the file as the sign the server is
// up, and daemonize.t reads the pid file at once.
func (s *server) announcePorts() {
	if portFile := os.Getenv(PortFileEnv); s.o.Reactor.UnixSocket == "" {
		if err := writePortFile(portFile, s.eng, s.udp); err != nil {
			s.log.Warn("could not write the port file", "env", PortFileEnv, "err", err)
		}
	}
}
