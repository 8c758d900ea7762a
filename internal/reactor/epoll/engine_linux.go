//go:build linux

// Package epoll is gocached's Linux engine: reactors, each a goroutine
// locked to an OS thread that owns one epoll context (with EPIOCSPARAMS
// busy-poll parameters and a bounded maxevents batch), one listener of every
// SO_REUSEPORT group (SYNs steered by RX queue with a classic BPF program),
// and every connection of one NAPI ID: the acceptor hands a connection to the
// reactor serving its NAPI, so each epoll context busy-polls one NAPI.
// The connection and loop bookkeeping is the shared core, package rawloop;
// this package is the epoll I/O behind it (epoll_wait, read, write,
// EPOLL_CTL_MOD). Accounting, flow control and the Session glue come from
// package reactor.
package epoll

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/rawloop"
	"golang.org/x/sys/unix"
)

// engine implements reactor.Engine. The embedded group is the reactors'
// shared part: lifecycle (Serve, Shutdown), accounting, routing and stats.
type engine struct {
	*rawloop.Group[connIO]
	cfg      reactor.Config
	ecfg     *reactor.EpollConfig // &cfg.Epoll, with defaults filled in
	reactors []*loop
	groups   []*listenGroup
	iface    string // listen interface used for -t auto, "" when none
}

// New builds the epoll engine, bound and listening: -t reactors (or one
// per NAPI of the listen interface with -t auto), each with one listener of
// every bound address.
func New(cfg reactor.Config) (reactor.Engine, error) {
	e, err := newEngine(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func newEngine(cfg reactor.Config) (*engine, error) {
	if err := rawloop.CheckConfig("epoll", &cfg); err != nil {
		return nil, err
	}
	ec := &cfg.Epoll
	if ec.MaxEvents <= 0 {
		ec.MaxEvents = 64
	}
	if ec.TimeoutMs <= 0 {
		// Block. 0 (the zero value) would spin a CPU per reactor; a
		// positive timeout (fullbusy: 1 ms) is the way to ask for wakeups.
		ec.TimeoutMs = -1
	}
	if err := checkPinCPUs(ec.PinCPUs); err != nil {
		return nil, err
	}
	binds, err := rawloop.Bindings("epoll", &cfg)
	if err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg}
	e.Group = rawloop.NewGroup[connIO]("epoll", &e.cfg)
	e.Group.SendsRefs = true // write (conn_linux.go) sends Conn.Refs in their places (writev)
	e.ecfg = &e.cfg.Epoll
	var n int
	n, e.iface = rawloop.LoopCount(cfg.Threads, binds)
	if e.reactors, err = rawloop.AddLoops(e.Group, n, e.newReactor); err != nil {
		return nil, err
	}
	e.warnBusyPoll()
	if err := e.Listen(cfg.UnixSocket != "", func() error { return e.listen(binds) }, e.listenUnix); err != nil {
		return nil, err
	}
	how := "-t"
	if cfg.Threads <= 0 && e.iface != "" {
		how = "one per RX queue of " + e.iface
	} else if cfg.Threads <= 0 {
		how = "GOMAXPROCS (no NAPI interface behind the listen address)"
	}
	slog.Info("epoll engine ready", "reactors", n, "chosen_by", how, "addr", e.Addr().String(),
		"busy_poll", len(e.reactors) > 0 && e.reactors[0].busyPoll, "listeners", len(e.groups))
	return e, nil
}

// listen opens one SO_REUSEPORT group per binding and gives listener i of
// each group to reactor i, under memcached's rules for the addresses of one
// -l entry (reactor.BindEach).
func (e *engine) listen(binds []reactor.Binding) error {
	return reactor.BindEach(binds, func(b reactor.Binding) (int, error) {
		ifi, q := reactor.ListenDevice(b.IP)
		g, err := openListenGroup(b, len(e.reactors), e.cfg.Backlog, e.cfg.SocketMark, ifi != nil && q > 0)
		if err != nil {
			return 0, fmt.Errorf("epoll: %w", err)
		}
		e.groups = append(e.groups, g)
		if err := e.adopt(g); err != nil {
			return 0, err
		}
		return g.addr.Port, nil
	})
}

// adopt gives listener i of group g (just appended to e.groups) to reactor i.
func (e *engine) adopt(g *listenGroup) error {
	e.Labels = append(e.Labels, g.label)
	fds := g.fds
	g.fds = nil // the reactors own them now
	for i, r := range e.reactors {
		if err := r.addListener(fds[i], len(e.groups)-1); err != nil {
			for _, fd := range fds[i+1:] {
				unix.Close(fd)
			}
			return fmt.Errorf("epoll: reactor %d: %w", i, err)
		}
	}
	return nil
}

// listenUnix binds -s, memcached's AF_UNIX listener (then nothing else
// listens). AF_UNIX has no SO_REUSEPORT balancing, so reactor 0 alone
// accepts on it and deals the connections out in turn (reactor.UnixSpreader
// says why); the other reactors hold the group's slot closed (-1).
func (e *engine) listenUnix() error {
	path := e.cfg.UnixSocket
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("epoll: unix socket: %w", err)
	}
	g := &listenGroup{fds: []int{fd}, unix: path, label: reactor.UnixAddrString(path)}
	// The file is made by the identity that is to own it (-u's user).
	err = reactor.AsUnixSocketOwner(e.cfg.UnixSocketOwner, func() error {
		if err := reactor.PrepareUnixSocket(path); err != nil {
			return fmt.Errorf("epoll: %w", err)
		}
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
			return fmt.Errorf("epoll: bind %s: %w", path, err)
		}
		if err := reactor.SetUnixMask(path, e.cfg.UnixMask); err != nil {
			return fmt.Errorf("epoll: %w", err)
		}
		return nil
	})
	if err != nil {
		g.close()
		return err
	}
	if err := unix.Listen(fd, e.cfg.Backlog); err != nil {
		g.close()
		return fmt.Errorf("epoll: listen %s: %w", path, err)
	}
	for range len(e.reactors) - 1 {
		g.fds = append(g.fds, -1)
	}
	e.groups = append(e.groups, g)
	return e.adopt(g)
}

// checkPinCPUs fails early, before anything listens, when --pin-cpus names a
// CPU this process may not run on.
func checkPinCPUs(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return fmt.Errorf("epoll: reading CPU affinity for --pin-cpus: %w", err)
	}
	for _, c := range cpus {
		if c < 0 || c >= len(allowed)*64 || !allowed.IsSet(c) {
			return fmt.Errorf("epoll: --pin-cpus: CPU %d is not available to this process (%d CPUs allowed)", c, allowed.Count())
		}
	}
	return nil
}

// warnBusyPoll logs once when busy polling was asked for and the kernel lacks it.
func (e *engine) warnBusyPoll() {
	for _, r := range e.reactors {
		if r.paramsErr != nil {
			slog.Warn("epoll: kernel has no epoll busy-poll ioctl (EPIOCSPARAMS, Linux 6.9+); running without busy polling",
				"err", r.paramsErr)
			return
		}
	}
}

func (e *engine) Addr() net.Addr {
	if len(e.groups) == 0 {
		return &net.TCPAddr{}
	}
	return e.groups[0].netAddr()
}

// Run and Release (with the core's Wake) make a reactor a reactor.Loop.
func (r *loop) Run() error { return r.run() }
func (r *loop) Release()   { r.release() }
