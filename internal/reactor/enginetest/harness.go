package enginetest

import (
	"bufio"
	"context"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/store"
	"github.com/gocached/gocached/internal/testproc"
)

// Server is an engine serving the real protocol over a small store.
type Server struct {
	Eng     reactor.Engine
	Env     *protocol.Env
	Network string // "tcp", or "unix" with Config.UnixSocket
	Addr    string // the first listener, host:port or the socket path
}

// Options adjust what Start builds beyond the engine's Config.
type Options struct {
	ReqsPerEvent int  // -R; 0 = 20
	Wildcard     bool // listen on every interface (an empty -l) instead of 127.0.0.1
	// ReadBufMemLimit is -o read_buf_mem_limit in bytes; 0: none.
	ReadBufMemLimit uint64
	// Flash gives the store a flash tier (-o ext_path) on small pages.
	Flash bool
}

// Start builds an engine with f on cfg (Listen defaults to 127.0.0.1 and
// Threads to 2), serving real Sessions over an 8 MiB store, and shuts it
// down when the test ends, checking that Shutdown and Serve succeed.
func Start(t testing.TB, f reactor.Factory, cfg reactor.Config, o Options) *Server {
	t.Helper()
	srv, served := start(t, f, cfg, o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Eng.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("Serve did not return after Shutdown")
		}
	})
	return srv
}

// StartManual is Start without the automatic shutdown: the test stops the
// engine itself and gets Serve's result from the channel.
func StartManual(t testing.TB, f reactor.Factory, cfg reactor.Config, o Options) (*Server, <-chan error) {
	t.Helper()
	return start(t, f, cfg, o)
}

func start(t testing.TB, f reactor.Factory, cfg reactor.Config, o Options) (*Server, chan error) {
	if cfg.Listen == "" && !o.Wildcard {
		cfg.Listen = "127.0.0.1"
	}
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	if o.ReqsPerEvent == 0 {
		o.ReqsPerEvent = 20
	}
	newSession, bind := newSessions(t, o.ReqsPerEvent, o.Flash)
	cfg.NewSession = newSession
	var env *protocol.Env
	if cfg.PrefetchInputs == nil { // as internal/server wires it
		cfg.PrefetchInputs = func(ins [][]byte) { env.PrefetchInputs(ins) }
	}
	eng, err := f(cfg)
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	env = bind(eng, cfg.MaxConns)
	if o.ReadBufMemLimit > 0 {
		tu := protocol.DefaultTuning()
		tu.ReadBufMemLimit = o.ReadBufMemLimit
		env.Settings.Tuning = &tu
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve() }()
	if ua, ok := eng.Addr().(*net.UnixAddr); ok {
		return &Server{Eng: eng, Env: env, Network: "unix", Addr: ua.Name}, served
	}
	addr := eng.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return &Server{Eng: eng, Env: env, Network: "tcp", Addr: net.JoinHostPort(host, itoa(addr.Port))}, served
}

// NewSessions returns a factory of real Sessions over a fresh 8 MiB store,
// for Config.NewSession, and bind, which completes their Env once the
// engine exists (as cmd/gocached does: the settings report what the engine
// chose). Sessions are only made after Serve starts, so bind comes first.
func NewSessions(t testing.TB, reqsPerEvent int) (newSession func() reactor.Session, bind func(eng reactor.Engine, maxConns int) *protocol.Env) {
	t.Helper()
	return newSessions(t, reqsPerEvent, false)
}

func newSessions(t testing.TB, reqsPerEvent int, flash bool) (newSession func() reactor.Session, bind func(eng reactor.Engine, maxConns int) *protocol.Env) {
	t.Helper()
	cfg := store.Config{MemoryLimit: 8 << 20, MaxItemSize: 1 << 20}
	if flash {
		cfg.Flash = openFlash(t)
	}
	st, err := store.New(cfg)
	if err != nil {
		t.Fatalf("store.New: %v", err)
	}
	t.Cleanup(st.Close)
	var env *protocol.Env
	newSession = func() reactor.Session { return protocol.NewSession(env) }
	bind = func(eng reactor.Engine, maxConns int) *protocol.Env {
		env = &protocol.Env{
			Store: st,
			Settings: &protocol.Settings{
				Version: "1.6.45", MaxConns: maxConns, MaxBytes: 8 << 20, ItemSizeMax: 1 << 20,
				Evictions: true, CASEnabled: true, ReqsPerEvent: reqsPerEvent, TCPBacklog: 1024,
				BindingProtocol: "auto-negotiate", Threads: eng.Threads(), Verbosity: new(atomic.Int32),
			},
			Server:         eng,
			StartUnix:      time.Now().Unix(),
			ResumesPending: true,
		}
		return env
	}
	return newSession, bind
}

// Client is one test connection with a 60 s deadline.
type Client struct {
	t  testing.TB
	NC net.Conn
	R  *bufio.Reader
}

// Dial connects to s.Addr.
func (s *Server) Dial(t testing.TB) *Client { return DialNet(t, s.Network, s.Addr) }

// DialAddr connects to the TCP address addr and closes the connection when
// the test ends.
func DialAddr(t testing.TB, addr string) *Client { return DialNet(t, "tcp", addr) }

// DialNet connects to addr on network ("tcp" or "unix").
func DialNet(t testing.TB, network, addr string) *Client {
	t.Helper()
	nc, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return NewClient(t, nc)
}

// NewClient is a test connection over nc (a TLS one, say), closed when
// the test ends.
func NewClient(t testing.TB, nc net.Conn) *Client {
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	return &Client{t: t, NC: nc, R: bufio.NewReaderSize(nc, 64<<10)}
}

// Send writes s whole.
func (c *Client) Send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.NC, s); err != nil {
		c.t.Fatalf("write %q: %v", trunc(s), err)
	}
}

// Line reads one reply line, CRLF included.
func (c *Client) Line() string {
	c.t.Helper()
	l, err := c.R.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read: %v (after %q)", err, l)
	}
	return l
}

// Expect reads len(want) lines and compares them.
func (c *Client) Expect(want ...string) {
	c.t.Helper()
	for _, w := range want {
		if got := c.Line(); got != w {
			c.t.Fatalf("got %q, want %q", trunc(got), trunc(w))
		}
	}
}

// ExpectEOF checks the server closed the connection.
func (c *Client) ExpectEOF() {
	c.t.Helper()
	_ = c.NC.SetReadDeadline(time.Now().Add(10 * time.Second))
	if l, err := c.R.ReadString('\n'); err != io.EOF {
		c.t.Fatalf("read %q, %v; want EOF", l, err)
	}
}

// Stats sends `stats [group]` and returns its lines by name.
func (c *Client) Stats(group string) map[string]string {
	c.t.Helper()
	cmd := "stats\r\n"
	if group != "" {
		cmd = "stats " + group + "\r\n"
	}
	c.Send(cmd)
	_, m, err := testproc.ReadStats(c.R)
	if err != nil {
		c.t.Fatalf("stats %s: %v", group, err)
	}
	return m
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
