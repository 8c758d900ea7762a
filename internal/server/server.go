package server

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/napi/pollmode"
	"github.com/gocached/gocached/internal/procctl"
	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/store"
)

// server is one run: what each start-up step builds for the steps after
// it and for the shutdown.
type server struct {
	o      *config.Options
	build  Build
	log    *slog.Logger
	stderr io.Writer
	proc   *procctl.Process

	st      *store.Store
	started int64 // the first start's time; a warm restart goes on from it

	sasl        *protocol.SASL
	tlsConfig   *tls.Config // nil without -Z
	tlsSettings *protocol.TLSSettings
	asciiAuth   *protocol.ASCIIAuth

	stopped      context.Context // done at SIGINT, SIGTERM or SIGUSR1
	stopSignals  context.CancelFunc
	gracefulStop chan os.Signal // hears SIGUSR1 alone: -e saves the cache

	napi *pollmode.Session

	cfg      reactor.Config // the engine's, complete once it starts
	eng      reactor.Engine
	udpConns atomic.Pointer[reactor.UDPServer] // for stats conns, once UDP listens
	settings *protocol.Settings
	env      *protocol.Env
	udp      io.Closer

	undo   []func() // what the steps started, stopped in reverse (unwind)
	status int      // the exit status while unwinding
}
