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

	// NAPI control (issue 4). cmd/gocached sets the per-NAPI kernel knobs
	// itself through internal/napi; the reactors only report them, so this
	// package never imports napi.

	// PollMode is the --poll-mode in effect, for `stats reactors`
	// (reactor:N:poll_mode): a preset name such as "suspend20", "custom"
	// when only explicit knob flags were given, "base" when the requested
	// mode found no NAPI to act on, and "" when gocached leaves the kernel
	// knobs alone. The preset's epoll parameters are already folded into
	// BusyPollUsecs, BusyPollBudget, PreferBusyPoll and EpollTimeoutMs.
	PollMode string
	// NAPIKnobs reads the current knobs of NAPI napiID back from the
	// kernel (netdev napi-get), for reactor:N:defer_hard_irqs,
	// gro_flush_timeout and irq_suspend_timeout at stats time; timeouts are
	// in nanoseconds. It is safe for concurrent use and costs one netlink
	// round trip per call, so call it at stats time only, never per event.
	// nil (no netdev family, or not Linux) leaves those lines out; an
	// error means "unknown right now" (e.g. the NAPI went away).
	NAPIKnobs func(napiID uint32) (deferHardIRQs uint32, groFlushTimeoutNs, irqSuspendTimeoutNs uint64, err error)
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
