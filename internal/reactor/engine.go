// Package reactor holds gocached's network engines: the portable engine (a
// goroutine per connection over net.Listener) and, on Linux, the epoll reactors
// routed by NAPI ID. Both drive protocol.Session and differ only in I/O.
package reactor

import (
	"context"
	"net"

	"github.com/gocached/gocached/internal/protocol"
)

// Config is what the engines take from the command line.
type Config struct {
	Listen       string // -l: host(s); "" = all interfaces
	Port         int    // -p
	MaxConns     int    // -c: across all reactors
	Threads      int    // -t: 0 = auto
	ReqsPerEvent int    // -R
	Backlog      int    // -b

	// Epoll engine only (issue 3/4).
	BusyPollUsecs  uint32
	BusyPollBudget uint16
	PreferBusyPoll bool
	MaxEvents      int
	EpollTimeoutMs int   // -1 blocks
	PinCPUs        []int // reactor i pinned to PinCPUs[i]
}

// Engine is a running server.
type Engine interface {
	// Addr is the bound listening address (useful with -p 0).
	Addr() net.Addr
	// Serve runs until Shutdown; it returns nil after a clean shutdown.
	Serve() error
	// Shutdown stops accepting, lets in-flight replies finish, closes connections.
	Shutdown(ctx context.Context) error
}

// New builds the engine called name ("go" or "epoll"), listening now, and
// sets env.Server to it.
func New(name string, cfg Config, env *protocol.Env) (Engine, error) {
	return newEngine(name, cfg, env)
}
