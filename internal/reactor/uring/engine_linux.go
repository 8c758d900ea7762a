//go:build linux

package uring

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/rawloop"
)

// engine implements reactor.Engine. The embedded group is the reactors'
// shared part: lifecycle (Serve, Shutdown), accounting, routing and stats.
type engine struct {
	*rawloop.Group[connIO]
	cfg      reactor.Config
	reactors []*loop
	bound    []net.Addr // each listen binding, as bound (*net.TCPAddr, or *net.UnixAddr for -s)
}

// New builds the io_uring engine, bound and listening: -t reactors (0: one
// per NAPI of the listen interface, else GOMAXPROCS), each with its own ring
// and one SO_REUSEPORT listener of every bound address. Where io_uring
// cannot be used it fails with one line that says why.
func New(cfg reactor.Config) (reactor.Engine, error) {
	if err := rawloop.CheckConfig("uring", &cfg); err != nil {
		return nil, err
	}
	if err := Available(); err != nil {
		return nil, err
	}
	binds, err := rawloop.Bindings("uring", &cfg)
	if err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg}
	e.Group = rawloop.NewGroup[connIO]("uring", &e.cfg)
	e.Group.SendsRefs = true // armSend sends Conn.Refs in their places (sendmsg)
	n, _ := rawloop.LoopCount(cfg.Threads, binds)
	if e.reactors, err = rawloop.AddLoops(e.Group, n, e.newReactor); err != nil {
		return nil, err
	}
	if err := e.Listen(cfg.UnixSocket != "", func() error { return e.listen(binds) }, e.listenUnix); err != nil {
		return nil, fmt.Errorf("uring: %w", err)
	}
	r0 := e.reactors[0]
	slog.Info("io_uring engine ready", "reactors", n, "addr", e.Addr().String(), "listeners", len(e.bound),
		"setup", setupFlagNames(r0.ring.Flags()), "napi_tracking", r0.napi.trackingName())
	return e, nil
}

func (e *engine) Addr() net.Addr {
	if len(e.bound) == 0 {
		return &net.TCPAddr{}
	}
	return e.bound[0]
}

// Run and Release (with the core's Wake) make a reactor a reactor.Loop.
func (r *loop) Run() error { return r.run() }
func (r *loop) Release()   { r.release() }
