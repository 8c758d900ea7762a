package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
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
func serve(o *options, log *slog.Logger) (status int) {
	slog.SetDefault(log)
	if o.napiIDs > 0 {
		log.Info("-N is accepted for memcached compatibility; the epoll engine finds NAPI IDs itself", "napi_ids", o.napiIDs)
	}
	st, err := store.New(store.Config{
		MemoryLimit:      o.memory,
		MaxItemSize:      o.itemSize,
		DisableEvictions: o.noEvict,
		DisableCAS:       o.noCAS,
	})
	if err != nil {
		log.Error("cannot create the store", "err", err)
		return 1
	}
	defer st.Close()
	env := &protocol.Env{Store: st, Settings: settingsFor(o), StartUnix: time.Now().Unix()}

	// Signals are caught before any knob is written, so that a SIGTERM
	// during start-up still restores them.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ns, err := startNAPI(o, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	defer ns.close()
	o.reactor.NAPIKnobs = ns.knobReader()
	defer func() {
		if err := ns.restore(); err != nil {
			log.Error("NAPI knobs not restored", "err", err)
			status = 1
		}
	}()

	eng, name, err := startEngine(o, env, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		status = 1
		return status
	}
	env.Settings.Engine = name
	if ta, ok := eng.Addr().(*net.TCPAddr); ok {
		env.Settings.Port = ta.Port // the real port when -p 0 picked one
	}
	if name == "go" {
		applyGoEngineThreads(o, log)
		env.Settings.Threads = runtime.GOMAXPROCS(0)
	}

	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	defer stopProfile()

	served := make(chan error, 1)
	go func() { served <- eng.Serve() }()
	log.Info("gocached serving", "addr", eng.Addr().String(), "engine", name, "version", version, "poll_mode", pollModeLabel(o))

	select {
	case err := <-served:
		log.Error("engine stopped", "err", err)
		served <- err
		status = 1
	case <-ctx.Done():
		log.Info("signal received; shutting down")
	}
	stop() // a second signal now terminates at once
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := eng.Shutdown(sctx); err != nil {
		log.Warn("shutdown did not finish cleanly", "err", err)
	}
	if err := <-served; err != nil && status == 0 {
		log.Error("engine stopped with an error", "err", err)
		status = 1
	}
	if err := ns.restore(); err != nil {
		log.Error("NAPI knobs not restored", "err", err)
		status = 1
	}
	log.Info("stopped")
	return status
}

// pollModeLabel is the poll mode for the start-up line.
func pollModeLabel(o *options) string {
	if o.reactor.PollMode == "" {
		return "none"
	}
	return o.reactor.PollMode
}

// startEngine builds the chosen engine. Until the epoll reactors exist, an
// epoll engine that reports "not implemented yet" falls back to the
// portable one with a warning.
func startEngine(o *options, env *protocol.Env, log *slog.Logger) (reactor.Engine, string, error) {
	name := o.engine
	eng, err := reactor.New(name, o.reactor, env)
	if err != nil && name == "epoll" && strings.Contains(err.Error(), "not implemented yet") {
		log.Warn("epoll engine unavailable; using the portable engine", "err", err)
		name = "go"
		eng, err = reactor.New(name, o.reactor, env)
	}
	return eng, name, err
}

func settingsFor(o *options) *protocol.Settings {
	verbosity := new(atomic.Int32)
	verbosity.Store(int32(o.verbosity))
	binding := "ascii"
	if o.protocol == "auto" {
		binding = "auto-negotiate" // memcached's name for -B auto
	}
	return &protocol.Settings{
		Version:         version,
		Port:            o.reactor.Port,
		UDPPort:         o.udpPort,
		Interface:       o.reactor.Listen,
		MaxConns:        o.reactor.MaxConns,
		Threads:         o.reactor.Threads,
		MaxBytes:        o.memory,
		ItemSizeMax:     o.itemSize,
		Evictions:       !o.noEvict,
		CASEnabled:      !o.noCAS,
		ReqsPerEvent:    o.reactor.ReqsPerEvent,
		TCPBacklog:      o.reactor.Backlog,
		BindingProtocol: binding,
		Engine:          o.engine,
		Verbosity:       verbosity,
	}
}

// epollOnlyFlags have no meaning on the portable engine.
var epollOnlyFlags = []string{"busy-poll-usecs", "busy-poll-budget", "prefer-busy-poll", "max-events", "epoll-timeout", "pin-cpus"}

// applyGoEngineThreads gives -t a meaning on the portable engine: the number
// of OS threads running Go code (GOMAXPROCS), so that `-t 1` compares with
// one epoll reactor or `memcached -t 1`. It also warns about epoll-only flags.
func applyGoEngineThreads(o *options, log *slog.Logger) {
	if o.reactor.Threads > 0 {
		runtime.GOMAXPROCS(o.reactor.Threads)
		log.Info("portable engine: -t sets GOMAXPROCS", "threads", o.reactor.Threads)
	}
	for _, name := range epollOnlyFlags {
		if o.changed[name] {
			log.Warn("flag only applies to --engine=epoll; ignored", "flag", "--"+name)
		}
	}
}
