//go:build linux

package uring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// engine implements reactor.Engine.
type engine struct {
	cfg      reactor.Config
	reactors []*loop
	router   *reactor.NAPIRouter
	bound    []boundAddr // each listen binding, as bound
	started  time.Time
	acct     *reactor.Accounting

	quitting  atomic.Bool // Shutdown called: stop accepting, drain
	force     atomic.Bool // Shutdown's context expired: close everything now
	stateMu   sync.Mutex
	state     engineState
	done      chan struct{} // closed when every reactor has exited (or Serve never will run)
	closeOnce sync.Once
	errMu     sync.Mutex
	err       error

	lastAcceptLog atomic.Int64
}

type engineState uint8

const (
	stateIdle    engineState = iota // built, Serve not called
	stateServing                    // Serve running
	stateClosed                     // shut down before Serve ran
)

// New builds the io_uring engine, bound and listening: -t reactors (0:
// GOMAXPROCS), each with its own ring and one SO_REUSEPORT listener of
// every bound address. Where io_uring cannot be used it fails with one line
// that says why.
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
	if cfg.UnixSocket == "" {
		addrs, err := reactor.ParseListen(cfg.Listen, cfg.Port)
		if err != nil {
			return nil, fmt.Errorf("uring: %w", err)
		}
		if binds, err = reactor.Bindings(addrs, nil); err != nil {
			return nil, fmt.Errorf("uring: %w", err)
		}
	}
	e := &engine{cfg: cfg, started: time.Now(), acct: reactor.NewAccounting(cfg.MaxConns), done: make(chan struct{})}
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
		r, err := newLoop(e, i)
		if err != nil {
			e.closeAll()
			return nil, fmt.Errorf("uring: reactor %d: %w", i, err)
		}
		e.reactors = append(e.reactors, r)
		ids[i] = &r.napiID
	}
	e.router = reactor.NewNAPIRouter(ids)
	listen := func() error { return e.listen(binds) }
	if cfg.UnixSocket != "" {
		listen = e.listenUnix
	}
	if err := listen(); err != nil {
		e.closeAll()
		return nil, fmt.Errorf("uring: %w", err)
	}
	e.acct.AddListeners(len(e.bound))
	r0 := e.reactors[0]
	slog.Info("io_uring engine ready", "reactors", n, "addr", e.Addr().String(), "listeners", len(e.bound),
		"setup", setupFlagNames(r0.ring.flags), "napi_tracking", r0.napi.trackingName())
	return e, nil
}

// Threads is the number of reactors.
func (e *engine) Threads() int { return len(e.reactors) }

func (e *engine) Addr() net.Addr {
	if len(e.bound) == 0 {
		return &net.TCPAddr{}
	}
	return e.bound[0].addr
}

// Serve runs the reactors until Shutdown.
func (e *engine) Serve() error {
	e.stateMu.Lock()
	switch e.state {
	case stateServing:
		e.stateMu.Unlock()
		return errors.New("uring: Serve called twice")
	case stateClosed:
		e.stateMu.Unlock()
		return nil
	}
	e.state = stateServing
	e.stateMu.Unlock()
	// A reactor asleep in io_uring_enter keeps its P (the wait is a raw
	// system call, see sysEnter): a P per reactor on top of the program's
	// leaves the rest of the program (timers, signals, the store's
	// background work) as many as it had.
	prev := runtime.GOMAXPROCS(0)
	ours := prev + len(e.reactors)
	runtime.GOMAXPROCS(ours)
	defer func() {
		if runtime.GOMAXPROCS(0) == ours {
			runtime.GOMAXPROCS(prev)
		}
	}()
	var wg sync.WaitGroup
	for _, r := range e.reactors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.run(); err != nil {
				e.fail(fmt.Errorf("reactor %d: %w", r.id, err))
			}
		}()
	}
	wg.Wait()
	e.closeAll()
	close(e.done)
	e.errMu.Lock()
	defer e.errMu.Unlock()
	return e.err
}

// fail records a fatal reactor error and stops the others.
func (e *engine) fail(err error) {
	e.errMu.Lock()
	if e.err == nil {
		e.err = err
	}
	e.errMu.Unlock()
	e.force.Store(true)
	e.stop()
}

func (e *engine) stop() {
	e.quitting.Store(true)
	e.acct.StopAccepting()
	for _, r := range e.reactors {
		r.mailbox.Wake()
	}
}

// Shutdown stops accepting, lets every connection's pending replies go out,
// closes the connections and waits for Serve to return. When ctx ends first
// the remaining connections are closed at once and ctx's error is returned.
func (e *engine) Shutdown(ctx context.Context) error {
	e.stop()
	e.stateMu.Lock()
	if e.state == stateIdle {
		e.state = stateClosed
		e.stateMu.Unlock()
		e.closeAll()
		close(e.done)
		return nil
	}
	e.stateMu.Unlock()
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		e.force.Store(true)
		e.stop()
		select {
		case <-e.done:
		case <-time.After(5 * time.Second):
		}
		return ctx.Err()
	}
}

// closeAll releases every reactor's ring, listeners and connections (the
// reactors have exited or never ran).
func (e *engine) closeAll() {
	e.closeOnce.Do(func() {
		for _, r := range e.reactors {
			r.release()
		}
	})
}

// logAcceptError logs accept failures at most once a second.
func (e *engine) logAcceptError(err error) {
	now := time.Now().Unix()
	if last := e.lastAcceptLog.Load(); now != last && e.lastAcceptLog.CompareAndSwap(last, now) {
		slog.Warn("uring: accept failed", "err", err)
	}
}
