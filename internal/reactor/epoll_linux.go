//go:build linux

package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"golang.org/x/sys/unix"
)

// sessionHandler is what a connection needs from protocol.Session. Tests put
// a small fake behind it to exercise the I/O machinery on its own.
type sessionHandler interface {
	Process(in, out []byte) (consumed int, reply []byte, st protocol.Status)
	Want() int
	Reset()
}

// epollEngine is the Linux engine: reactors, each a goroutine locked to an OS
// thread that owns one epoll context, one listener of every SO_REUSEPORT group,
// and every connection of one NAPI ID.
type epollEngine struct {
	cfg        Config
	env        *protocol.Env
	newSession func() sessionHandler
	reactors   []*reactor
	router     *napiRouter
	groups     []*listenGroup
	iface      string // listen interface used for -t auto, "" when none
	maxConns   int64

	curConns   atomic.Int64 // across reactors, including handoffs in flight
	peakConns  atomic.Int64
	totalConns atomic.Uint64
	rejected   atomic.Uint64
	// listenDisabled counts accept pauses for lack of fds (listen_disabled_num).
	listenDisabled atomic.Uint64

	quitting  atomic.Bool // Shutdown called: stop accepting, drain
	force     atomic.Bool // Shutdown's context expired: close everything now
	stateMu   sync.Mutex
	state     engineState
	done      chan struct{} // closed when every reactor has exited (or Serve never will run)
	closeOnce sync.Once
	errMu     sync.Mutex
	err       error // first fatal reactor error

	lastAcceptLog atomic.Int64
}

type engineState uint8

const (
	stateIdle    engineState = iota // built, Serve not called
	stateServing                    // Serve running
	stateClosed                     // shut down before Serve ran
)

// engineOption adjusts an epollEngine before it starts (tests).
type engineOption func(*epollEngine)

func withSessions(f func() sessionHandler) engineOption {
	return func(e *epollEngine) { e.newSession = f }
}

func newEpollEngine(cfg Config, env *protocol.Env) (Engine, error) {
	return newEpollEngineWith(cfg, env)
}

func newEpollEngineWith(cfg Config, env *protocol.Env, opts ...engineOption) (*epollEngine, error) {
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = 64
	}
	if cfg.Backlog <= 0 {
		cfg.Backlog = 1024
	}
	if cfg.EpollTimeoutMs <= 0 {
		// Block. 0 (Config's zero value) would spin a CPU per reactor; a
		// positive timeout (fullbusy: 1 ms) is the way to ask for wakeups.
		cfg.EpollTimeoutMs = -1
	}
	if err := checkPinCPUs(cfg.PinCPUs); err != nil {
		return nil, err
	}
	specs, err := parseListen(cfg.Listen, cfg.Port)
	if err != nil {
		return nil, fmt.Errorf("reactor: %w", err)
	}
	e := &epollEngine{
		cfg:        cfg,
		env:        env,
		maxConns:   int64(cfg.MaxConns),
		done:       make(chan struct{}),
		newSession: func() sessionHandler { return protocol.NewSession(env) },
	}
	for _, o := range opts {
		o(e)
	}
	n := cfg.Threads
	if n <= 0 {
		ips := make([]net.IP, len(specs))
		for i, s := range specs {
			ips[i] = s.ip
		}
		n, e.iface = autoReactors(ips)
	}
	ids := make([]*atomic.Uint32, n)
	for i := range n {
		r, err := newReactor(e, i)
		if err != nil {
			e.closeAll()
			return nil, fmt.Errorf("reactor %d: %w", i, err)
		}
		e.reactors = append(e.reactors, r)
		ids[i] = &r.napiID
	}
	e.router = newNAPIRouter(ids)
	e.warnBusyPoll()
	for _, s := range specs {
		if ifi, q := listenDevice(s.ip); ifi != nil && q > 0 {
			s.onDevice = true
		}
		g, err := openListenGroup(s, n, cfg.Backlog)
		if err != nil {
			e.closeAll()
			return nil, fmt.Errorf("reactor: %w", err)
		}
		e.groups = append(e.groups, g)
		addr := "tcp:" + g.addr.String()
		fds := g.fds
		g.fds = nil // the reactors own them now
		for i, r := range e.reactors {
			if err := r.addListener(fds[i], addr); err != nil {
				for _, fd := range fds[i+1:] {
					unix.Close(fd)
				}
				e.closeAll()
				return nil, fmt.Errorf("reactor %d: %w", i, err)
			}
		}
	}
	if env != nil {
		env.Server = e
		if env.Settings != nil {
			env.Settings.Threads = n
		}
	}
	how := "-t"
	if cfg.Threads <= 0 && e.iface != "" {
		how = "one per RX queue of " + e.iface
	} else if cfg.Threads <= 0 {
		how = "GOMAXPROCS (no NAPI interface behind the listen address)"
	}
	slog.Info("reactor: epoll engine ready", "reactors", n, "chosen_by", how, "addr", e.Addr().String(),
		"busy_poll", len(e.reactors) > 0 && e.reactors[0].busyPoll)
	return e, nil
}

// checkPinCPUs fails early, before anything listens, when --pin-cpus names a
// CPU this process may not run on.
func checkPinCPUs(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return fmt.Errorf("reactor: reading CPU affinity for --pin-cpus: %w", err)
	}
	for _, c := range cpus {
		if c < 0 || c >= len(allowed)*64 || !allowed.IsSet(c) {
			return fmt.Errorf("reactor: --pin-cpus: CPU %d is not available to this process (%d CPUs allowed)", c, allowed.Count())
		}
	}
	return nil
}

// warnBusyPoll logs once when busy polling was asked for and the kernel lacks it.
func (e *epollEngine) warnBusyPoll() {
	for _, r := range e.reactors {
		if r.paramsErr != nil {
			slog.Warn("reactor: kernel has no epoll busy-poll ioctl (EPIOCSPARAMS, Linux 6.9+); running without busy polling",
				"err", r.paramsErr)
			return
		}
	}
}

func (e *epollEngine) Addr() net.Addr {
	if len(e.groups) == 0 {
		return &net.TCPAddr{}
	}
	a := e.groups[0].addr
	return &a
}

// Serve runs the reactors until Shutdown.
func (e *epollEngine) Serve() error {
	e.stateMu.Lock()
	switch e.state {
	case stateServing:
		e.stateMu.Unlock()
		return errors.New("reactor: Serve called twice")
	case stateClosed:
		e.stateMu.Unlock()
		return nil // Shutdown came first
	}
	e.state = stateServing
	e.stateMu.Unlock()
	// A reactor blocked in epoll_wait keeps its P (the runtime only takes it
	// back after sysmon notices), so with every P held by a reactor the rest
	// of the program (timers, signal handling, background store work) waits
	// up to 10 ms for a P, and a reactor whose P was taken waits for one when
	// it wakes. Giving each reactor a P of its own on top of the CPUs the
	// program had avoids both; reactors asleep in epoll_wait use no CPU.
	prevProcs := runtime.GOMAXPROCS(0)
	ourProcs := prevProcs + len(e.reactors)
	if prevProcs < ourProcs {
		runtime.GOMAXPROCS(ourProcs)
		defer func() {
			if runtime.GOMAXPROCS(0) == ourProcs {
				runtime.GOMAXPROCS(prevProcs)
			}
		}()
	}
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
func (e *epollEngine) fail(err error) {
	e.errMu.Lock()
	if e.err == nil {
		e.err = err
	}
	e.errMu.Unlock()
	e.force.Store(true)
	e.stop()
}

func (e *epollEngine) stop() {
	e.quitting.Store(true)
	for _, r := range e.reactors {
		r.mailbox.wake()
	}
}

// Shutdown stops accepting, lets every connection's pending replies go out,
// closes the connections, and waits for Serve to return. When ctx ends first,
// the remaining connections are closed at once and ctx's error is returned.
func (e *epollEngine) Shutdown(ctx context.Context) error {
	e.stop()
	e.stateMu.Lock()
	if e.state == stateIdle {
		// Serve never ran: nothing to drain.
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

// closeAll releases listeners and reactor fds (the reactors have exited or never ran).
func (e *epollEngine) closeAll() {
	e.closeOnce.Do(func() {
		for _, r := range e.reactors {
			r.release()
		}
	})
}

// admit counts a new connection against -c; false means reject it.
func (e *epollEngine) admit() bool {
	n := e.curConns.Add(1)
	if e.maxConns > 0 && n > e.maxConns {
		e.curConns.Add(-1)
		return false
	}
	for {
		p := e.peakConns.Load()
		if n <= p || e.peakConns.CompareAndSwap(p, n) {
			return true
		}
	}
}

// logAcceptError logs accept failures at most once a second.
func (e *epollEngine) logAcceptError(err error) {
	now := time.Now().Unix()
	if last := e.lastAcceptLog.Load(); now != last && e.lastAcceptLog.CompareAndSwap(last, now) {
		slog.Warn("reactor: accept failed", "err", err)
	}
}

// clock is the unix time in seconds.
func (e *epollEngine) clock() int64 { return time.Now().Unix() }
