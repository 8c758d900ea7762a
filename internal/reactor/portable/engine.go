// Package portable is gocached's portable engine ("go"): one goroutine per
// listener accepting and one goroutine per connection doing blocking reads
// and writes through the net package. It runs wherever Go does, and it is
// the baseline the epoll reactors are measured against. Accounting, `stats
// conns`, flow control and the Session glue come from package reactor.
package portable

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// engine implements reactor.Engine.
type engine struct {
	cfg       reactor.Config
	log       *slog.Logger
	listeners []*listener
	sessions  sync.Pool
	started   time.Time
	acct      *reactor.Accounting
	acceptLog reactor.EverySecond // accept failures are logged at most once a second
	threads   int

	serving atomic.Bool
	closed  atomic.Bool // Shutdown has begun; read without the lock on hot paths
	connWG  sync.WaitGroup

	mu       sync.Mutex
	conns    map[*conn]struct{}
	retired  totals        // byte and yield totals of closed connections
	base     totals        // totals at the last `stats reset`
	nextID   int           // fallback `stats conns` name where no fd exists
	closedCh chan struct{} // closed when Shutdown begins
}

// listener is one bound address of the -l list.
type listener struct {
	ln  net.Listener
	fd  int
	tls *tls.Config // nil: plain text (no -Z, or a "notls:" address)
}

// New builds the portable engine, bound and listening. -t, when given, sets
// GOMAXPROCS: the number of OS threads running Go code, so that `-t 1`
// compares with one epoll reactor or `memcached -t 1`.
func New(cfg reactor.Config) (reactor.Engine, error) {
	if cfg.NewSession == nil {
		return nil, errors.New("portable: Config.NewSession is nil")
	}
	e := &engine{
		cfg:      cfg,
		log:      slog.Default().With("engine", "go"),
		started:  time.Now(),
		acct:     reactor.NewAccounting(cfg.MaxConns),
		conns:    make(map[*conn]struct{}),
		closedCh: make(chan struct{}),
	}
	e.sessions.New = func() any { return cfg.NewSession() }
	var err error
	switch {
	case cfg.UnixSocket != "":
		err = reactor.UnixListenError(e.listenUnix())
	case !cfg.NoTCP:
		err = reactor.TCPListenError(e.listenTCP())
	}
	if err != nil {
		e.closeListeners()
		return nil, err
	}
	e.acct.AddListeners(len(e.listeners))
	e.threads = runtime.GOMAXPROCS(0)
	if cfg.Threads > 0 {
		runtime.GOMAXPROCS(cfg.Threads)
		e.threads = cfg.Threads
		e.log.Info("portable engine: -t sets GOMAXPROCS", "threads", cfg.Threads)
	}
	return e, nil
}

// listenUnix binds -s (memcached then listens on nothing else).
func (e *engine) listenUnix() error {
	path := e.cfg.UnixSocket
	// The file is made by the identity that is to own it (-u's user).
	var ln net.Listener
	err := reactor.AsUnixSocketOwner(e.cfg.UnixSocketOwner, func() error {
		if err := reactor.PrepareUnixSocket(path); err != nil {
			return fmt.Errorf("portable: %w", err)
		}
		var err error
		ln, err = net.Listen("unix", path)
		if err != nil {
			return fmt.Errorf("portable: listen on %s: %w", path, err)
		}
		// memcached never removes the path at its stop, and by then it
		// may be a successor's that took it over: Go's Close would
		// unlink it from under that server.
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		e.listeners = append(e.listeners, &listener{ln: ln, fd: fdOf(ln)})
		if err := reactor.SetUnixMask(path, e.cfg.UnixMask); err != nil {
			return fmt.Errorf("portable: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := setBacklog(ln, e.cfg.Backlog); err != nil {
		e.log.Warn("cannot set listen backlog", "addr", path, "backlog", e.cfg.Backlog, "err", err)
	}
	return nil
}

// listenTCP binds every address of -l.
func (e *engine) listenTCP() error {
	addrs, err := reactor.ParseListen(e.cfg.Listen, e.cfg.Port)
	if err != nil {
		return fmt.Errorf("portable: %w", err)
	}
	binds, err := reactor.Bindings(addrs, nil)
	if err != nil {
		return fmt.Errorf("portable: %w", err)
	}
	cfg := e.cfg
	return reactor.BindEach(binds, func(b reactor.Binding) (int, error) {
		ln, err := listen(b, b.Port, cfg.SocketMark)
		if err != nil {
			return 0, fmt.Errorf("portable: listen on %s: %w", net.JoinHostPort(b.IP.String(), strconv.Itoa(b.Port)), err)
		}
		if err := setBacklog(ln, cfg.Backlog); err != nil {
			e.log.Warn("cannot set listen backlog", "addr", ln.Addr(), "backlog", cfg.Backlog, "err", err)
		}
		l := &listener{ln: ln, fd: fdOf(ln)}
		l.tls = listenerTLS(cfg.TLS, b.TLS)
		e.listeners = append(e.listeners, l)
		return ln.Addr().(*net.TCPAddr).Port, nil
	})
}

// listen binds one socket. "tcp6" makes the net package set IPV6_V6ONLY, so
// the IPv6 wildcard leaves IPv4 to its own socket as in memcached.
func listen(b reactor.Binding, port int, mark uint32) (net.Listener, error) {
	network := "tcp4"
	if b.V6() {
		network = "tcp6"
	}
	lc := net.ListenConfig{Control: reactor.MarkControl(mark)}
	return lc.Listen(context.Background(), network, net.JoinHostPort(b.IP.String(), strconv.Itoa(port)))
}

func (e *engine) Addr() net.Addr {
	if len(e.listeners) == 0 {
		return &net.TCPAddr{} // -p 0: no TCP, as the other engines report it
	}
	return e.listeners[0].ln.Addr()
}

func (e *engine) Threads() int { return e.threads }

// Serve accepts on every listener until Shutdown (then it returns nil) or
// until a listener fails for good.
func (e *engine) Serve() error {
	if !e.serving.CompareAndSwap(false, true) {
		return errors.New("portable: Serve called twice")
	}
	for _, l := range e.listeners {
		e.log.Debug("listening", "addr", l.ln.Addr())
	}
	if len(e.listeners) == 0 {
		<-e.closedCh // nothing to accept (-p 0): serve until Shutdown
		return nil
	}
	errc := make(chan error, len(e.listeners))
	for _, l := range e.listeners {
		go func() { errc <- e.acceptLoop(l) }()
	}
	var first error
	for range e.listeners {
		if err := <-errc; err != nil && first == nil {
			first = err
			e.closeListeners() // one dead listener stops the others too
		}
	}
	if e.closed.Load() {
		return nil
	}
	return first
}

// acceptPause is how long a listener waits after accept failed for lack of
// descriptors (memcached's listen_disabled, re-checked every 10 ms).
const acceptPause = 10 * time.Millisecond

func (e *engine) acceptLoop(l *listener) error {
	var backoff time.Duration
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if e.closed.Load() {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("portable: listener %s closed: %w", l.ln.Addr(), err)
			}
			// Out of descriptors and the like: pause this listener and
			// retry, as net/http does, instead of spinning or giving up.
			// Out of descriptors retries every 10 ms, as the other engines
			// and memcached do: a client leaving frees one at any moment
			// (-o no_maxconns_fast waits for exactly that).
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				backoff = acceptPause
			}
			e.acct.ListenDisabled()
			if e.acceptLog.Allow() {
				e.log.Warn("accept failed; retrying", "addr", l.ln.Addr(), "err", err, "retry_in", backoff)
			}
			select {
			case <-time.After(backoff):
			case <-e.closedCh:
			}
			e.acct.ListenResumed()
			continue
		}
		backoff = 0
		if c, ok := e.register(nc); ok {
			c.tls = l.tls
			go c.serve()
		}
	}
}

// register admits a new connection, or refuses it (beyond -c, or during
// Shutdown).
func (e *engine) register(nc net.Conn) (*conn, bool) {
	if !e.acct.Admit() {
		reactor.RejectConn(nc)
		return nil, false
	}
	e.mu.Lock()
	if e.closed.Load() {
		e.mu.Unlock()
		e.acct.Release()
		nc.Close()
		return nil, false
	}
	c := &conn{e: e, nc: nc, fd: fdOf(nc)}
	if c.fd < 0 {
		e.nextID++
		c.fd = -e.nextID
	}
	c.lastCmd.Store(time.Now().Unix())
	e.conns[c] = struct{}{}
	e.connWG.Add(1)
	e.mu.Unlock()
	return c, true
}

// release forgets a finished connection, keeping its byte counts.
func (e *engine) release(c *conn) {
	c.nc.Close()
	e.mu.Lock()
	delete(e.conns, c)
	e.retired.add(c.totals())
	e.mu.Unlock()
	if c.sess != nil {
		c.sess.Reset()
		e.sessions.Put(c.sess)
		c.sess = nil
	}
	// Counted out last, so that whoever sees curr_connections drop also
	// sees the connection's Session reset and back in the pool.
	e.acct.Release()
	e.connWG.Done()
}

// Shutdown stops accepting, lets every connection finish the replies to the
// requests it has already read, and closes them. If ctx ends first the
// remaining connections are closed at once and ctx's error is returned.
func (e *engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	if !e.closed.Swap(true) {
		close(e.closedCh)
	}
	conns := make([]*conn, 0, len(e.conns))
	for c := range e.conns {
		conns = append(conns, c)
	}
	e.mu.Unlock()
	e.acct.StopAccepting()
	e.closeListeners()

	// A past read deadline wakes connections blocked in Read; a connection
	// busy with a batch writes its replies first, then sees closed and ends.
	now := time.Now()
	for _, c := range conns {
		c.nc.SetReadDeadline(now)
	}
	done := make(chan struct{})
	go func() {
		e.connWG.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	e.mu.Lock()
	for c := range e.conns {
		c.nc.Close() // unblocks writers stuck on clients that do not read
	}
	e.mu.Unlock()
	<-done
	return fmt.Errorf("portable: shutdown cut short: %w", ctx.Err())
}

func (e *engine) closeListeners() {
	for _, l := range e.listeners {
		l.ln.Close()
	}
}
