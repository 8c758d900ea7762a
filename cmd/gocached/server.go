package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/napi/pollmode"
	"github.com/gocached/gocached/internal/procctl"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocached/gocached/internal/metrics"
	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/epoll"
	"github.com/gocached/gocached/internal/reactor/portable"
	"github.com/gocached/gocached/internal/reactor/uring"
	"github.com/gocached/gocached/internal/store"
)

// shutdownGrace bounds how long SIGINT/SIGTERM waits for in-flight replies
// before connections are closed regardless.
const shutdownGrace = 10 * time.Second

// newLogger maps memcached's verbosity onto slog levels: quiet shows
// warnings and errors, -v adds info, -vv and more add debug.
func newLogger(w io.Writer, verbosity int) *slog.Logger {
	level := slog.LevelWarn
	switch {
	case verbosity >= 2:
		level = slog.LevelDebug
	case verbosity == 1:
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// serve runs the server until SIGINT or SIGTERM and returns the exit status.
func serve(o *config.Options, log *slog.Logger, stderr io.Writer) (status int) {
	slog.SetDefault(log)
	proc := (*procctl.Process)(&o.Proc)
	proc.Prepare(log)
	o.Ext.Log(log)
	if o.NAPIIDs > 0 {
		log.Info("-N is accepted for memcached compatibility; the epoll engine finds NAPI IDs itself", "napi_ids", o.NAPIIDs)
	}
	if err := proc.PrepareMemoryFile(o.MemoryFile); err != nil {
		if errors.Is(err, procctl.ErrMemoryFileOpen) {
			fmt.Fprintln(stderr, err) // memcached's line, first
		}
		log.Error("cannot start", "err", err)
		return 1
	}
	newStore := func(cfg store.Config) (st *store.Store, err error) {
		if cfg.MemoryFile == "" {
			return store.New(cfg)
		}
		// -e's file and its FILE.meta are read, opened and removed as the
		// -u user, as memcached, already that user, does: root may have
		// neither CAP_DAC_OVERRIDE nor CAP_CHOWN (Debian's unit).
		err = proc.AsUser(func() error {
			st, err = store.New(cfg)
			return err
		})
		return st, err
	}
	st, err := newStore(store.Config{
		MemoryLimit:      o.Memory,
		MaxItemSize:      o.ItemSize,
		DisableEvictions: o.NoEvict,
		DisableCAS:       o.NoCAS,
		GrowthFactor:     o.Gates.Factor,
		SlabChunkMax:     o.Ext.SlabChunkMax,
		SlabSizes:        o.Ext.SlabSizes, // -o slab_sizes: the classes `stats slabs` shows
		MinChunk:         o.Gates.MinChunk,
		LargePages:       o.LargePages,
		MemoryFile:       o.MemoryFile,
		// -o hashpower / no_hashexpand: the level `stats` reports as
		// hash_power_level starts there and, unless told not to, grows
		// as memcached's table would.
		HashPower:    o.Ext.HashPower,
		NoHashExpand: o.Ext.NoHashExpand,
		TrackSizes:   o.Ext.TrackSizes, // `stats sizes` from the start
		// Without memcached's segmented LRU one read protects an item.
		PlainLRU:    o.Ext.PlainLRU,
		Premalloced: initialMalloc(log),
		Started:     time.Now().Unix(),
	})
	if err != nil {
		log.Error("cannot create the store", "err", err)
		return 1
	}
	defer st.Close()
	tu := o.Ext.Tuning
	if tu.SlabReassign {
		st.SetAutomove(tu.SlabAutomove, tu.AutomoveRatio, int(tu.AutomoveWindow))
	}
	st.SetLRUTuning(tu.HotPct, tu.WarmPct, tu.HotFactor, tu.WarmFactor, o.Ext.PlainLRU)
	// memcached's restart check runs before its slabs_init.
	for _, l := range st.RestartLines() { // whatever -v says, as memcached
		fmt.Fprintln(stderr, l)
	}
	if o.Verbosity >= 2 { // memcached's slabs_init lines, before it listens
		printSlabClasses(stderr, st)
	}
	if msg := config.LockTableRefusal(o.Ext.HashPower, o.MemcachedThreads()); msg != "" {
		fmt.Fprint(stderr, msg)
		return 1
	}
	// -o temporary_ttl turns memcached's TEMP LRU on: items stored with at
	// most that many seconds to live are never evicted.
	if o.Ext.HasTemporaryTTL {
		st.SetTemporaryTTL(o.Ext.TemporaryTTL)
	}
	if rep := st.RestoreReport(); rep != "" {
		log.Info(rep)
	}
	started := st.Started() // a warm restart goes on from the first start
	sasl, err := saslConfig(o, log, stderr)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	tlsConfig, tlsSettings, err := loadTLS(&o.TLS, log)
	if err != nil {
		var le *tlsLoadError
		if errors.As(err, &le) {
			fmt.Fprintln(stderr, le.memcachedLine()) // memcached's line, first, and its EX_USAGE
			log.Error("cannot start", "err", err)
			return config.ExitUsage
		}
		log.Error("cannot start", "err", err)
		return 1
	}
	asciiAuth, err := loadASCIIAuth(&o.Gates, proc, stderr)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}

	// Signals are caught before any knob is written, so that a SIGTERM
	// during start-up still restores them. As in memcached, SIGUSR1 is a
	// graceful stop too and SIGHUP is ignored.
	signal.Ignore(syscall.SIGHUP)
	// A closed stderr (its reader gone while -vv logs) must not kill the
	// server: writes then fail with EPIPE instead.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	defer stop()
	// With -e only a graceful stop (SIGUSR1, `shutdown graceful`) saves
	// the cache for the next start, as in memcached.
	graceful := make(chan os.Signal, 1)
	signal.Notify(graceful, syscall.SIGUSR1)
	defer signal.Stop(graceful)
	ns, err := pollmode.Start(o, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	defer ns.Close()
	defer func() {
		if err := ns.Restore(); err != nil {
			log.Error("NAPI knobs not restored", "err", err)
			status = 1
		}
	}()

	// The engine's config is complete here and never written again; the
	// Sessions' Env is built once the engine has said what it chose.
	cfg := o.Reactor
	cfg.Epoll.NAPIKnobs = ns.KnobReader()
	cfg.TLS = tlsConfig
	cfg.UnixSocketOwner = proc.AsUser // -s is made as the -u user, as memcached makes it
	// The UDP sockets start after the engine; stats conns lists them once
	// they exist, as memcached does.
	var udpConns atomic.Pointer[reactor.UDPServer]
	cfg.MoreConns = func(now int64) []reactor.ConnLine {
		if u := udpConns.Load(); u != nil {
			return u.ConnLines(now)
		}
		return nil
	}
	var env *protocol.Env
	cfg.NewSession = func() reactor.Session { return protocol.NewSession(env) }
	// -o no_maxconns_fast: clients beyond -c are not refused; they wait, as
	// in memcached, until the descriptor limit set below lets them in.
	fast := o.Ext.Tuning.MaxConnsFast
	if !fast {
		cfg.MaxConns = 0
	}
	if refuseNoTLS(stderr, o, tlsConfig != nil) {
		log.Error("cannot start: a notls: listener without -Z")
		return listenFailureStatus
	}
	eng, err := engines[o.Engine](cfg)
	if err != nil {
		if reportListenFailure(stderr, log, o, err) {
			return listenFailureStatus
		}
		log.Error("cannot start", "err", err)
		return 1
	}
	settings := settingsFor(o, eng)
	if tlsConfig != nil {
		settings.TLS = tlsSettings
	} else {
		settings.TLSOptions = tlsSettings
	}
	env = &protocol.Env{Store: st, Settings: settings, Server: withUDPTraffic{eng, &udpConns}, StartUnix: started,
		Protocol: o.Binding, ListenerBinding: listenerProtocols(o), SASL: sasl, ASCIIAuth: asciiAuth, Shutdown: shutdownHook(log),
		ResumesPending: true} // every engine, and the UDP server, resume pending Sessions
	// memcached's -vv lines ("<fd get k", ">fd END") go to stderr whenever
	// the verbosity is 2 or more: from the start with -vv, or from a
	// `verbosity 2` command on, as in memcached (the Sessions check the
	// level, an atomic load per batch).
	env.VerboseLog = os.Stderr
	warnEngineFlags(o, log)
	stopMetrics, err := startMetrics(o.MetricsListen, env, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		eng.Shutdown(context.Background())
		return 1
	}
	defer stopMetrics()
	udp, err := startUDP(o, eng.Threads(), cfg.NewSession, log)
	if err != nil {
		eng.Shutdown(context.Background())
		if reportListenFailure(stderr, log, o, err) {
			return listenFailureStatus
		}
		log.Error("cannot start", "err", err)
		return 1
	}
	if u, ok := udp.(*reactor.UDPServer); ok {
		udpConns.Store(u)
	}
	defer udp.Close()
	if o.Verbosity >= 2 {
		announceListeners(env.VerboseLog, eng, settings.BindingProtocol, udp)
	}
	// memcached writes the file only for its TCP/UDP listeners: with -s,
	// none (and no empty file).
	if portFile := os.Getenv(portFileEnv); o.Reactor.UnixSocket == "" {
		if err := writePortFile(portFile, eng, udp); err != nil {
			log.Warn("could not write the port file", "env", portFileEnv, "err", err)
		}
	}
	if !fast {
		if err := procctl.LimitDescriptorsToClients(o.Reactor.MaxConns); err != nil {
			log.Warn("-o no_maxconns_fast: cannot bound descriptors to -c; clients beyond it are served", "err", err)
		}
	}
	// Listeners are bound and knobs set: root is no longer needed. What
	// memcached, already the -u user, would have created is the user's.
	err = proc.HandOver(o.Reactor.UnixSocket, os.Getenv(portFileEnv))
	if err == nil {
		var privileged func(func() error) error
		if privileged, err = proc.DropPrivileges(log, ns.KeptStatePath()); privileged != nil {
			ns.Privileged = privileged
		}
	}
	if err != nil {
		if errors.Is(err, procctl.ErrNoUser) {
			fmt.Fprintf(stderr, "can't find the user %s to switch to\n", o.Proc.User) // memcached's line, first
		}
		log.Error("cannot start", "err", err)
		eng.Shutdown(context.Background())
		if errors.Is(err, procctl.ErrNoUser) {
			return 67 // memcached's EX_NOUSER
		}
		return 1
	}
	defer proc.WritePidFile(log)()
	stopReturn := make(chan struct{})
	go returnMemory(stopReturn, func() uint64 { return st.Stats().HashBytes }) // hand a burst's buffers back (memreturn.go)
	defer close(stopReturn)

	stopProfile, err := startCPUProfile(o.CPUProfile)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	defer stopProfile()

	served := make(chan error, 1)
	go func() { served <- eng.Serve() }()
	procctl.NotifyDaemonParent() // -d: the parent exits now, the server listens
	log.Info("gocached serving", "addr", eng.Addr().String(), "engine", o.Engine, "threads", eng.Threads(), "version", version, "build", buildLabel, "poll_mode", pollModeLabel(o))

	stopAuto := pollmode.StartAutoTuner(o, ns, eng, log)
	gracefulStop := false
	select {
	case err := <-served:
		log.Error("engine stopped", "err", err)
		served <- err
		status = 1
	case <-ctx.Done():
		log.Info("signal received; shutting down")
		// Both channels hear SIGUSR1, in an order the runtime picks.
		select {
		case <-graceful:
			gracefulStop = true
		case <-time.After(50 * time.Millisecond):
		}
		// memcached's lines on its way out.
		if gracefulStop {
			fmt.Fprintln(stderr, "Gracefully stopping")
		} else if settings.Verbosity.Load() > 0 { // memcached reads the level `verbosity` last set
			fmt.Fprintln(stderr, "Exiting normally")
		}
	}
	stop()     // a second signal now terminates at once
	stopAuto() // before the knobs are restored
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var stalled atomic.Bool
	go func() {
		written := func() uint64 { return eng.ServerStats().BytesWritten }
		cutWhenStill(sctx, written, stopStillFor, stopCheckEvery, func() { stalled.Store(true); cancel() })
	}()
	if err := eng.Shutdown(sctx); err != nil {
		if stalled.Load() {
			log.Info("clients whose replies had not moved for a second were cut", "after", stopStillFor)
		} else {
			log.Warn("shutdown did not finish cleanly", "err", err)
		}
	}
	if err := <-served; err != nil && status == 0 {
		log.Error("engine stopped with an error", "err", err)
		status = 1
	}
	if err := ns.Restore(); err != nil {
		log.Error("NAPI knobs not restored", "err", err)
		status = 1
	}
	saveMemoryFile(o, st, gracefulStop, log)
	log.Info("stopped")
	return status
}

// printSlabClasses writes memcached's -vv start-up lines, one per size
// class: "slab class   1: chunk size        96 perslab   10922".
func printSlabClasses(w io.Writer, st *store.Store) {
	sizes, perPage := st.ClassSizes()
	for i, size := range sizes {
		fmt.Fprintf(w, "slab class %3d: chunk size %9d perslab %7d\n", i+1, size, perPage[i])
	}
}

// pollModeLabel is the poll mode for the start-up line.
func pollModeLabel(o *config.Options) string {
	if o.Reactor.Epoll.PollMode == "" {
		return "none"
	}
	return o.Reactor.Epoll.PollMode
}

// engines are the network engines --engine chooses from.
var engines = map[string]reactor.Factory{
	"epoll": epoll.New,
	"go":    portable.New,
	"uring": uring.New,
}

// settingsFor builds what `stats settings` reports, once: from the command
// line, plus what the engine chose (its port with -p 0, its thread count).
func settingsFor(o *config.Options, eng reactor.Engine) *protocol.Settings {
	verbosity := new(atomic.Int32)
	verbosity.Store(int32(o.Verbosity))
	binding := o.Binding
	if o.SASL {
		binding = protocol.BindingBinary // -S implies -B binary, as in memcached
	}
	s := &protocol.Settings{
		Version:         version,
		DebugTime:       o.DebugTime,
		Port:            boundPort(eng, o.Reactor.Port),
		UDPPort:         o.UDPPort,
		Interface:       o.Reactor.Listen,
		DomainSocket:    o.Reactor.UnixSocket,
		Umask:           o.UnixMaskText,
		MaxConns:        o.Reactor.MaxConns,
		Threads:         eng.Threads(),
		MaxBytes:        o.Memory,
		ItemSizeMax:     o.ItemSize,
		SlabChunkMax:    o.Ext.SlabChunkMax,
		Evictions:       !o.NoEvict,
		CASEnabled:      !o.NoCAS,
		ReqsPerEvent:    o.ReqsPerEvent,
		IdleTimeout:     int(o.Reactor.IdleTimeout / time.Second),
		TCPBacklog:      o.Reactor.Backlog,
		BindingProtocol: binding.String(),
		Verbosity:       verbosity,
	}
	o.Gates.Apply(s)
	o.Ext.Apply(s) // -o no_lru_crawler, watcher_logbuf_size, ...
	s.MemoryFile = o.MemoryFile
	return s
}

// ignoredFlags are the reactor flags each engine does without: the
// portable engine has no reactors, the io_uring one no epoll batch or
// busy-poll packet budget.
var ignoredFlags = map[string][]string{
	"go":    {"busy-poll-usecs", "busy-poll-budget", "prefer-busy-poll", "max-events", "epoll-timeout", "pin-cpus"},
	"uring": {"busy-poll-budget", "max-events"},
}

// warnEngineFlags points at flags the chosen engine ignores.
func warnEngineFlags(o *config.Options, log *slog.Logger) {
	for _, name := range ignoredFlags[o.Engine] {
		if o.Changed[name] {
			log.Warn("flag does not apply to this engine; ignored", "engine", o.Engine, "flag", "--"+name)
		}
	}
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

// boundPort is the port the engine listens on: the one -p -1 picked (0 with -p 0: no TCP).
func boundPort(eng reactor.Engine, flag int) int {
	if ta, ok := eng.Addr().(*net.TCPAddr); ok {
		return ta.Port
	}
	return flag
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

// saveMemoryFile keeps the cache in -e's file for the next start when the
// stop was graceful; any other stop leaves no metadata, so the next start
// is empty.
func saveMemoryFile(o *config.Options, st *store.Store, graceful bool, log *slog.Logger) {
	if o.MemoryFile == "" {
		return
	}
	if !graceful {
		log.Info("memory file not saved: only a graceful stop (SIGUSR1) saves the cache", "file", o.MemoryFile)
		return
	}
	if err := st.SaveState(); err != nil {
		log.Error("memory file not saved", "file", o.MemoryFile, "err", err)
		return
	}
	log.Info(st.RestoreReport())
}
