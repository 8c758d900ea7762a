//go:build linux

package uring

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync/atomic"

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
	if cfg.TLS != nil {
		return nil, errors.New("uring: TLS is served by the portable engine (--engine=go)")
	}
	if cfg.NewSession == nil {
		return nil, errors.New("uring: Config.NewSession is nil")
	}
	if err := Available(); err != nil {
		return nil, err
	}
	cfg.Epoll.PinCPUs = slices.Clone(cfg.Epoll.PinCPUs)
	if cfg.Backlog <= 0 {
		cfg.Backlog = 1024
	}
	var binds []reactor.Binding
	if cfg.UnixSocket == "" && !cfg.NoTCP {
		addrs, err := reactor.ParseListen(cfg.Listen, cfg.Port)
		if err != nil {
			return nil, reactor.TCPListenError(fmt.Errorf("uring: %w", err))
		}
		if binds, err = reactor.Bindings(addrs, nil); err != nil {
			return nil, reactor.TCPListenError(fmt.Errorf("uring: %w", err))
		}
	}
	e := &engine{cfg: cfg}
	e.Group = rawloop.NewGroup[connIO]("uring", &e.cfg)
	n := cfg.Threads
	if n <= 0 {
		// -t auto as in the epoll engine: one reactor per NAPI of the
		// listen interface, GOMAXPROCS where there is none.
		var ips []net.IP
		for _, b := range binds {
			if !b.Wildcard() {
				ips = append(ips, b.IP)
			}
		}
		if len(ips) != len(binds) {
			ips = nil
		}
		n, _ = reactor.AutoReactors(ips)
	}
	ids := make([]*atomic.Uint32, n)
	for i := range n {
		r, err := newReactor(e, i)
		if err != nil {
			e.CloseAll()
			return nil, fmt.Errorf("uring: reactor %d: %w", i, err)
		}
		e.reactors = append(e.reactors, r)
		e.Add(r)
		ids[i] = &r.NAPIID
	}
	e.Router = reactor.NewRouter(ids)
	listen := func() error { return reactor.TCPListenError(e.listen(binds)) }
	if cfg.UnixSocket != "" {
		listen = func() error { return reactor.UnixListenError(e.listenUnix()) }
	}
	if err := listen(); err != nil {
		e.CloseAll()
		return nil, fmt.Errorf("uring: %w", err)
	}
	e.Acct.AddListeners(len(e.bound))
	r0 := e.reactors[0]
	slog.Info("io_uring engine ready", "reactors", n, "addr", e.Addr().String(), "listeners", len(e.bound),
		"setup", setupFlagNames(r0.ring.flags), "napi_tracking", r0.napi.trackingName())
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
