package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// The portable engine ("go"): one goroutine per listener accepting and one
// goroutine per connection doing blocking reads and writes through the net
// package. It runs wherever Go does, and it is the baseline the epoll
// reactors are measured against.

const (
	// goReadBufSize is the read buffer every connection starts with and
	// shrinks back to when idle (memcached's READ_BUFFER_SIZE).
	goReadBufSize = 16 << 10
	// goFlushThreshold bounds the replies a connection holds while it chains
	// through Yields: beyond it they are written before processing goes on.
	goFlushThreshold = 1 << 20
	// goKeepOutCap is the largest reply buffer kept between batches; a bigger
	// one (after a large get) is dropped so idle connections stay small.
	goKeepOutCap = 64 << 10
	// goRejectMsg is memcached's reply to a connection beyond -c.
	goRejectMsg = "ERROR Too many open connections\r\n"
)

// goSession is what the engine needs of a protocol.Session; tests substitute
// their own to exercise the engine apart from the protocol.
type goSession interface {
	Process(in, out []byte) (consumed int, reply []byte, st protocol.Status)
	Want() int
	Reset()
}

// goEngine implements Engine and protocol.Server.
type goEngine struct {
	cfg        Config
	log        *slog.Logger
	listeners  []*goListener
	newSession func() goSession
	sessions   sync.Pool
	started    time.Time

	serving atomic.Bool
	closed  atomic.Bool // Shutdown has begun; read without the lock on hot paths
	connWG  sync.WaitGroup

	total          atomic.Uint64 // connections accepted
	rejected       atomic.Uint64 // connections refused beyond -c
	listenDisabled atomic.Uint64 // accept failures that paused a listener

	mu         sync.Mutex
	conns      map[*goConn]struct{}
	structures int           // high-water mark of connections, for connection_structures
	retired    goTotals      // byte and yield totals of closed connections
	resetBase  goTotals      // totals at the last `stats reset`
	nextID     int           // fallback `stats conns` name where no fd exists
	closedCh   chan struct{} // closed when Shutdown begins
}

// goListener is one bound address of the -l list.
type goListener struct {
	ln         net.Listener
	fd         int
	lastAccept atomic.Int64 // unix seconds
}

func newGoEngine(cfg Config, env *protocol.Env) (Engine, error) {
	e, err := newGoEngineWith(cfg, func() goSession { return protocol.NewSession(env) })
	if err != nil {
		return nil, err
	}
	env.Server = e
	return e, nil
}

// newGoEngineWith builds the engine, bound and listening, with Sessions made
// by newSession.
func newGoEngineWith(cfg Config, newSession func() goSession) (*goEngine, error) {
	addrs, err := commonListenAddrs(cfg.Listen, cfg.Port)
	if err != nil {
		return nil, err
	}
	e := &goEngine{
		cfg:        cfg,
		log:        slog.Default().With("engine", "go"),
		newSession: newSession,
		started:    time.Now(),
		conns:      make(map[*goConn]struct{}),
		closedCh:   make(chan struct{}),
	}
	e.sessions.New = func() any { return e.newSession() }
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			e.closeListeners()
			return nil, fmt.Errorf("reactor: listen on %s: %w", addr, err)
		}
		if err := goSetBacklog(ln, cfg.Backlog); err != nil {
			e.log.Warn("cannot set listen backlog", "addr", ln.Addr(), "backlog", cfg.Backlog, "err", err)
		}
		l := &goListener{ln: ln, fd: commonFD(ln)}
		l.lastAccept.Store(e.started.Unix())
		e.listeners = append(e.listeners, l)
	}
	return e, nil
}

func (e *goEngine) Addr() net.Addr { return e.listeners[0].ln.Addr() }

// Serve accepts on every listener until Shutdown (then it returns nil) or
// until a listener fails for good.
func (e *goEngine) Serve() error {
	if !e.serving.CompareAndSwap(false, true) {
		return errors.New("reactor: Serve called twice")
	}
	for _, l := range e.listeners {
		e.log.Debug("listening", "addr", l.ln.Addr())
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

func (e *goEngine) acceptLoop(l *goListener) error {
	var backoff time.Duration
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if e.closed.Load() {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("reactor: listener %s closed: %w", l.ln.Addr(), err)
			}
			// Out of descriptors and the like: pause this listener and
			// retry, as net/http does, instead of spinning or giving up.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			e.listenDisabled.Add(1)
			e.log.Warn("accept failed; retrying", "addr", l.ln.Addr(), "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-e.closedCh:
			}
			continue
		}
		backoff = 0
		l.lastAccept.Store(time.Now().Unix())
		c, ok := e.register(nc, l)
		if !ok {
			continue
		}
		go c.serve()
	}
}

// register admits a new connection, or refuses it (beyond -c, or during
// Shutdown). The limit is checked under the lock so that several listeners
// cannot together exceed it.
func (e *goEngine) register(nc net.Conn, l *goListener) (*goConn, bool) {
	e.mu.Lock()
	if e.closed.Load() {
		e.mu.Unlock()
		nc.Close()
		return nil, false
	}
	if e.cfg.MaxConns > 0 && len(e.conns) >= e.cfg.MaxConns {
		e.mu.Unlock()
		e.reject(nc)
		return nil, false
	}
	c := &goConn{e: e, nc: nc, listener: l, fd: commonFD(nc)}
	if c.fd < 0 {
		e.nextID++
		c.fd = e.nextID
	}
	c.lastCmd.Store(time.Now().Unix())
	e.conns[c] = struct{}{}
	e.structures = max(e.structures, len(e.conns))
	e.connWG.Add(1)
	e.mu.Unlock()
	e.total.Add(1)
	return c, true
}

// reject tells a client beyond -c why it is refused, as memcached does, and
// closes it. The socket is fresh, so the short write cannot block for long.
func (e *goEngine) reject(nc net.Conn) {
	e.rejected.Add(1)
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	nc.Write([]byte(goRejectMsg))
	nc.Close()
}

// release forgets a finished connection, keeping its byte counts.
func (e *goEngine) release(c *goConn) {
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
	e.connWG.Done()
}

// Shutdown stops accepting, lets every connection finish the replies to the
// requests it has already read, and closes them. If ctx ends first the
// remaining connections are closed at once and ctx's error is returned.
func (e *goEngine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	if !e.closed.Swap(true) {
		close(e.closedCh)
	}
	conns := make([]*goConn, 0, len(e.conns))
	for c := range e.conns {
		conns = append(conns, c)
	}
	e.mu.Unlock()
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
	return fmt.Errorf("reactor: shutdown cut short: %w", ctx.Err())
}

func (e *goEngine) closeListeners() {
	for _, l := range e.listeners {
		l.ln.Close()
	}
}
