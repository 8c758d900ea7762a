package server

import (
	"context"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/epoll"
	"github.com/gocached/gocached/internal/reactor/portable"
	"github.com/gocached/gocached/internal/reactor/uring"
)

// startEngine completes the engine's config, starts the engine --engine
// names on the TCP and UNIX listeners, and builds the Sessions' Env from
// what the engine chose (its port with -p -1, its thread count).
func (s *server) startEngine() error {
	o, log := s.o, s.log
	// The engine's config is complete here and never written again.
	cfg := o.Reactor
	cfg.Epoll.NAPIKnobs = s.napi.KnobReader()
	cfg.TLS = s.tlsConfig
	cfg.UnixSocketOwner = s.proc.AsUser // -s is made as the -u user, as memcached makes it
	// The UDP sockets start after the engine; stats conns lists them once
	// they exist, as memcached does.
	cfg.MoreConns = func(now int64) []reactor.ConnLine {
		if u := s.udpConns.Load(); u != nil {
			return u.ConnLines(now)
		}
		return nil
	}
	cfg.NewSession = func() reactor.Session { return protocol.NewSession(s.env) }
	cfg.PrefetchInputs = func(ins [][]byte) { s.env.PrefetchInputs(ins) } // s.env is set below
	// -o no_maxconns_fast: clients beyond -c are not refused; they wait, as
	// in memcached, until the descriptor limit (startListeners) lets them in.
	if !o.Ext.Tuning.MaxConnsFast {
		cfg.MaxConns = 0
	}
	s.cfg = cfg
	if refusal := refuseListenEntries(s.stderr, o, s.tlsConfig != nil); refusal != "" {
		log.Error("cannot start: an -l entry memcached refuses", "reason", refusal)
		return exit(listenFailureStatus)
	}
	eng, err := engines[o.Engine](cfg)
	if err != nil {
		if reportListenFailure(s.stderr, log, o, err) {
			return exit(listenFailureStatus)
		}
		return s.cannotStart(err)
	}
	s.eng = eng
	settings := settingsFor(o, eng, s.build.Version)
	if s.tlsConfig != nil {
		settings.TLS = s.tlsSettings
	} else {
		settings.TLSOptions = s.tlsSettings
	}
	s.settings = settings
	s.env = &protocol.Env{Store: s.st, Settings: settings, Server: withBuildStats{withUDPTraffic{eng, &s.udpConns}, s.build}, StartUnix: s.started,
		Protocol: o.Binding, ListenerBinding: listenerProtocols(o), SASL: s.sasl, ASCIIAuth: s.asciiAuth, Shutdown: shutdownHook(log),
		ResumesPending: true} // every engine, and the UDP server, resume pending Sessions
	// memcached's -vv lines ("<fd get k", ">fd END") go to stderr whenever
	// the verbosity is 2 or more: from the start with -vv, or from a
	// `verbosity 2` command on, as in memcached (the Sessions check the
	// level, an atomic load per batch).
	s.env.VerboseLog = os.Stderr
	warnEngineFlags(o, log)
	return nil
}

// shutdownEngine stops an engine that never served, when a later step fails.
func (s *server) shutdownEngine() { s.eng.Shutdown(context.Background()) }

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
func settingsFor(o *config.Options, eng reactor.Engine, version string) *protocol.Settings {
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
	s.NAPIIDs = o.NAPIIDs
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

// boundPort is the port the engine listens on: the one -p -1 picked (0 with -p 0: no TCP).
func boundPort(eng reactor.Engine, flag int) int {
	if ta, ok := eng.Addr().(*net.TCPAddr); ok {
		return ta.Port
	}
	return flag
}
