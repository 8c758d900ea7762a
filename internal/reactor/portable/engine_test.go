package portable

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
)

// goTestServer is a go engine on a free loopback port, driven by enginetest.Fake.
type goTestServer struct {
	e      *engine
	shared *enginetest.FakeStore
	addr   string
	served chan error // Serve's result
}

func startGoTest(t testing.TB, cfg reactor.Config, perCall int) *goTestServer {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1"
	}
	sh := enginetest.NewFakeStore()
	e, err := newTestEngine(cfg, sh.NewSession(perCall))
	if err != nil {
		t.Fatalf("newGoEngineWith: %v", err)
	}
	sh.Server = e
	s := &goTestServer{e: e, shared: sh, addr: e.Addr().String(), served: make(chan error, 1)}
	go func() { s.served <- e.Serve() }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop shuts the engine down (idempotent) and checks Serve returned nil.
func (s *goTestServer) stop(t testing.TB) {
	t.Helper()
	if s.served == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.e.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	select {
	case err := <-s.served:
		if err != nil {
			t.Errorf("Serve returned %v after Shutdown, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Serve did not return after Shutdown")
	}
	s.served = nil
}

// newTestEngine builds the engine with Sessions from newSession.
func newTestEngine(cfg reactor.Config, newSession func() reactor.Session) (*engine, error) {
	cfg.NewSession = newSession
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return e.(*engine), nil
}

type goTestClient struct {
	t  testing.TB
	nc net.Conn
	r  *bufio.Reader
}

func (s *goTestServer) dial(t testing.TB) *goTestClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", s.addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &goTestClient{t: t, nc: nc, r: bufio.NewReaderSize(nc, 64<<10)}
}

func (c *goTestClient) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *goTestClient) line() string {
	c.t.Helper()
	l, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read line (got %q): %v", l, err)
	}
	return l
}

func (c *goTestClient) expect(want ...string) {
	c.t.Helper()
	for _, w := range want {
		if got := c.line(); got != w {
			c.t.Fatalf("got %q, want %q", got, w)
		}
	}
}

// expectEOF checks the server closed the connection.
func (c *goTestClient) expectEOF() {
	c.t.Helper()
	b, err := c.r.ReadByte()
	if err == nil {
		c.t.Fatalf("got byte %q, want the connection closed", b)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		c.t.Fatalf("got %v, want EOF", err)
	}
}

func TestGoEngineRequests(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 200_000) // 3.2 MB: many reads, buffer growth
	tests := []struct {
		name   string
		send   []string // written one after another
		expect []string
	}{
		{"single get miss", []string{"get a\r\n"}, []string{"END\r\n"}},
		{"set then get", []string{"set k 3\r\nabc\r\n", "get k\r\n"},
			[]string{"STORED\r\n", "VALUE k 3\r\n", "abc\r\n", "END\r\n"}},
		{"pipelined in one write", []string{"set p 1\r\nx\r\nget p\r\nget q\r\nget p\r\n"},
			[]string{"STORED\r\n", "VALUE p 1\r\n", "x\r\n", "END\r\n", "END\r\n", "VALUE p 1\r\n", "x\r\n", "END\r\n"}},
		{"request split in pieces", []string{"se", "t s 5\r", "\nhel", "lo\r", "\nget s\r\n"},
			[]string{"STORED\r\n", "VALUE s 5\r\n", "hello\r\n", "END\r\n"}},
		{"large value across reads", []string{"set big " + fmt.Sprint(len(big)) + "\r\n" + big + "\r\nget big\r\n"},
			[]string{"STORED\r\n", "VALUE big " + fmt.Sprint(len(big)) + "\r\n", big + "\r\n", "END\r\n"}},
		{"unknown command keeps conn", []string{"bogus\r\nget a\r\n"}, []string{"ERROR\r\n", "END\r\n"}},
	}
	s := startGoTest(t, reactor.Config{}, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := s.dial(t)
			for _, piece := range tt.send {
				c.send(piece)
				time.Sleep(time.Millisecond) // let pieces arrive as separate reads
			}
			for _, w := range tt.expect {
				if got := c.line(); got != w {
					t.Fatalf("got %.80q, want %.80q", got, w)
				}
			}
		})
	}
}

func TestGoEngineQuitCloses(t *testing.T) {
	s := startGoTest(t, reactor.Config{}, 0)
	c := s.dial(t)
	c.send("get a\r\nquit\r\nget a\r\n") // replies before quit are sent, nothing after
	c.expect("END\r\n")
	c.expectEOF()
	enginetest.WaitFor(t, "connection released", func() bool { return s.e.ServerStats().CurrConnections == 0 })
}

func TestGoEngineYield(t *testing.T) {
	s := startGoTest(t, reactor.Config{}, 2)
	c := s.dial(t)
	// Ten requests in one write arrive in one read: handled 2 per Process
	// call, so the engine sees 4 Yields and must go on after each.
	c.send(strings.Repeat("get y\r\n", 10))
	for range 10 {
		c.expect("END\r\n")
	}
	if got := s.e.ServerStats().ConnYields; got != 4 {
		t.Errorf("conn_yields = %d, want 4", got)
	}
}

func TestGoEngineConnLimit(t *testing.T) {
	s := startGoTest(t, reactor.Config{MaxConns: 2}, 0)
	a, b := s.dial(t), s.dial(t)
	for _, c := range []*goTestClient{a, b} {
		c.send("get k\r\n")
		c.expect("END\r\n")
	}
	over := s.dial(t)
	over.expect(string(reactor.RejectMessage))
	over.expectEOF()
	st := s.e.ServerStats()
	// memcached's counts: the listener is a conn (curr = 1+2-1, total = 1+2).
	if st.RejectedConnections != 1 || st.CurrConnections != 2 || st.TotalConnections != 3 {
		t.Errorf("rejected/curr/total = %d/%d/%d, want 1/2/3",
			st.RejectedConnections, st.CurrConnections, st.TotalConnections)
	}
	a.nc.Close()
	enginetest.WaitFor(t, "a slot to free", func() bool { return s.e.ServerStats().CurrConnections == 1 })
	again := s.dial(t)
	again.send("get k\r\n")
	again.expect("END\r\n")
}

func TestGoEngineGracefulShutdown(t *testing.T) {
	s := startGoTest(t, reactor.Config{}, 0)
	idle := s.dial(t)
	idle.send("get k\r\n")
	idle.expect("END\r\n")
	busy := s.dial(t)
	busy.send("sleep 300\r\n")
	<-s.shared.Sleeping // the request is in flight

	start := time.Now()
	s.stop(t)
	if time.Since(start) < 250*time.Millisecond {
		t.Errorf("Shutdown returned before the in-flight request finished")
	}
	busy.expect("SLEPT\r\n")
	busy.expectEOF()
	idle.expectEOF()
	if _, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		t.Errorf("dial after Shutdown succeeded, want refused")
	}
	if st := s.e.ServerStats(); st.AcceptingConns || st.CurrConnections != 0 {
		t.Errorf("after Shutdown accepting=%v curr=%d, want false 0", st.AcceptingConns, st.CurrConnections)
	}
}

func TestGoEngineShutdownDeadline(t *testing.T) {
	s := startGoTest(t, reactor.Config{}, 0)
	c := s.dial(t)
	// A client that never reads a 16 MB reply (four times what the
	// socket buffers can take) keeps the writer blocked; Shutdown must
	// give up at its deadline and still close everything.
	c.send("big 16777216\r\n")
	enginetest.WaitFor(t, "the writer to block", func() bool {
		s.e.mu.Lock()
		defer s.e.mu.Unlock()
		for conn := range s.e.conns {
			if conn.state.Load() == int32(reactor.StateWriting) {
				return true
			}
		}
		return false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.e.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want deadline exceeded", err)
	}
	select {
	case err := <-s.served:
		if err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	s.served = nil
	if got := s.e.ServerStats().CurrConnections; got != 0 {
		t.Errorf("curr_connections = %d after forced shutdown, want 0", got)
	}
}

func TestGoEngineManyConns(t *testing.T) {
	const conns, rounds = 200, 20
	s := startGoTest(t, reactor.Config{MaxConns: conns}, 0)
	clients := make([]*goTestClient, conns)
	for i := range clients {
		clients[i] = s.dial(t)
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i, c := range clients {
		wg.Go(func() {
			for j := range rounds {
				key := fmt.Sprintf("k%d", i)
				val := fmt.Sprintf("v%d-%d", i, j)
				fmt.Fprintf(c.nc, "set %s %d\r\n%s\r\nget %s\r\n", key, len(val), val, key)
				want := []string{"STORED\r\n", fmt.Sprintf("VALUE %s %d\r\n", key, len(val)), val + "\r\n", "END\r\n"}
				for _, w := range want {
					got, err := c.r.ReadString('\n')
					if err != nil || got != w {
						errs <- fmt.Errorf("conn %d round %d: got %q (%v), want %q", i, j, got, err, w)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := s.e.ServerStats()
	// memcached's counts with one listener: curr = 1+conns-1, total = 1+conns.
	if st.CurrConnections != conns || st.TotalConnections != conns+1 || st.RejectedConnections != 0 {
		t.Errorf("curr/total/rejected = %d/%d/%d, want %d/%d/0",
			st.CurrConnections, st.TotalConnections, st.RejectedConnections, conns, conns+1)
	}
	for _, c := range clients {
		c.nc.Close()
	}
	enginetest.WaitFor(t, "all connections released", func() bool { return s.e.ServerStats().CurrConnections == 0 })
	// A Session is reset as its connection is released: wait for the
	// count rather than assume it is done by the time curr drops.
	enginetest.WaitFor(t, "every session reset", func() bool { return s.shared.Resets() >= conns })
	if resets := s.shared.Resets(); resets != conns {
		t.Errorf("sessions reset %d times, want %d (one per closed connection)", resets, conns)
	}
}

func TestGoEngineStatsCounters(t *testing.T) {
	s := startGoTest(t, reactor.Config{}, 0)
	c := s.dial(t)
	req := "set k 3\r\nabc\r\nget k\r\n"
	c.send(req)
	c.expect("STORED\r\n", "VALUE k 3\r\n", "abc\r\n", "END\r\n")
	wantWritten := uint64(len("STORED\r\nVALUE k 3\r\nabc\r\nEND\r\n"))
	// The client can read the reply before the server's Write returns and counts it.
	enginetest.WaitFor(t, "bytes_written to count the reply", func() bool { return s.e.ServerStats().BytesWritten >= wantWritten })
	st := s.e.ServerStats()
	if st.BytesRead != uint64(len(req)) || st.BytesWritten != wantWritten {
		t.Errorf("bytes read/written = %d/%d, want %d/%d", st.BytesRead, st.BytesWritten, len(req), wantWritten)
	}
	if !st.AcceptingConns || st.Threads == 0 || st.ConnStructures < 2 {
		t.Errorf("accepting=%v threads=%d structures=%d", st.AcceptingConns, st.Threads, st.ConnStructures)
	}
	c.nc.Close()
	enginetest.WaitFor(t, "release", func() bool { return s.e.ServerStats().CurrConnections == 0 })
	if got := s.e.ServerStats().BytesRead; got != uint64(len(req)) {
		t.Errorf("bytes_read after close = %d, want %d (closed conns keep counting)", got, len(req))
	}
	s.e.ResetStats()
	st = s.e.ServerStats()
	if st.BytesRead != 0 || st.BytesWritten != 0 || st.TotalConnections != 0 {
		t.Errorf("after reset read/written/total = %d/%d/%d, want 0/0/0", st.BytesRead, st.BytesWritten, st.TotalConnections)
	}
	d := s.dial(t)
	d.send("get k\r\n")
	d.line()
	d.line()
	d.line()
	enginetest.WaitFor(t, "bytes_written to count the reply", func() bool { return s.e.ServerStats().BytesWritten > 0 })
	if st := s.e.ServerStats(); st.TotalConnections != 1 || st.BytesRead != 7 {
		t.Errorf("after reset and one request total=%d read=%d, want 1 7", st.TotalConnections, st.BytesRead)
	}
}

func TestGoEngineStatsConns(t *testing.T) {
	s := startGoTest(t, reactor.Config{}, 0)
	other := s.dial(t)
	other.send("get k\r\n")
	other.expect("END\r\n")
	c := s.dial(t)
	// The idle one's reply is out before its state is back to conn_read
	// (the engine sets it once the write returns): ask until it is.
	var lines []string
	var got string
	for try := 0; try < 200; try++ {
		c.send("conns\r\n")
		lines = lines[:0]
		for l := c.line(); l != "END\r\n"; l = c.line() {
			lines = append(lines, strings.TrimSuffix(l, "\r\n"))
		}
		if got = strings.Join(lines, "\n"); strings.Contains(got, ":state conn_read") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ln := s.e.listeners[0]
	wants := []string{
		fmt.Sprintf("STAT %d:addr tcp:%s", ln.fd, s.addr),
		fmt.Sprintf("STAT %d:state conn_listening", ln.fd),
		fmt.Sprintf("STAT %d:secs_since_last_cmd", ln.fd),
		fmt.Sprintf(":addr tcp:%s\n", other.nc.LocalAddr()),
		fmt.Sprintf(":addr tcp:%s\n", c.nc.LocalAddr()),
		":listen_addr tcp:" + s.addr,
		":state conn_read",      // the idle one
		":state conn_parse_cmd", // the one asking
	}
	for _, w := range wants {
		if !strings.Contains(got+"\n", w) {
			t.Errorf("stats conns lacks %q; got:\n%s", w, got)
		}
	}
	if n := len(lines); n != 3+2*4 {
		t.Errorf("stats conns has %d lines, want 11 (1 listener x 3 + 2 clients x 4)", n)
	}
	if s.e.GroupStats("reactors", func(string, string) {}) {
		t.Errorf("GroupStats(reactors) = true on the go engine, want false")
	}
}

func TestGoEnginePanicClosesOnlyThatConn(t *testing.T) {
	s := startGoTest(t, reactor.Config{}, 0)
	good := s.dial(t)
	bad := s.dial(t)
	bad.send("panic\r\n")
	bad.expectEOF()
	good.send("get k\r\n")
	good.expect("END\r\n")
}

func TestGoEngineMultipleListeners(t *testing.T) {
	ln6, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	ln6.Close()
	s := startGoTest(t, reactor.Config{Listen: "127.0.0.1, ::1"}, 0)
	if len(s.e.listeners) != 2 {
		t.Fatalf("%d listeners, want 2", len(s.e.listeners))
	}
	for _, l := range s.e.listeners {
		nc, err := net.DialTimeout("tcp", l.ln.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", l.ln.Addr(), err)
		}
		c := &goTestClient{t: t, nc: nc, r: bufio.NewReader(nc)}
		c.send("get k\r\n")
		c.expect("END\r\n")
		nc.Close()
	}
}

func TestGoEngineListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = newTestEngine(reactor.Config{Listen: "127.0.0.1", Port: port}, enginetest.NewFakeStore().NewSession(0))
	if err == nil || !strings.Contains(err.Error(), "listen on 127.0.0.1:") {
		t.Fatalf("listening on a taken port: err = %v, want a listen error naming the address", err)
	}
}

func TestGoMakeRoom(t *testing.T) {
	tests := []struct {
		name           string
		size, r, w     int
		want           int // the Session's Want()
		wantLen        int
		wantPendingLen int
	}{
		{"compacts in place", 16384, 10, 14, 0, 16384, 4},
		{"full buffer doubles", 16384, 0, 16384, 0, 32768, 16384},
		{"grows to Want rounded to 4 KiB", 16384, 2, 10, 40000, 40960, 8},
		{"Want that fits needs no growth", 16384, 0, 100, 5000, 16384, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := make([]byte, tt.size)
			for i := range buf {
				buf[i] = byte(i)
			}
			pending := bytes.Clone(buf[tt.r:tt.w])
			c := &conn{sess: &enginetest.Fake{Wanted: tt.want}}
			got, r, w := c.makeRoom(buf, tt.r, tt.w)
			if len(got) != tt.wantLen || r != 0 || w != tt.wantPendingLen {
				t.Fatalf("len=%d r=%d w=%d, want len=%d r=0 w=%d", len(got), r, w, tt.wantLen, tt.wantPendingLen)
			}
			if !bytes.Equal(got[:w], pending) {
				t.Errorf("pending bytes changed: %v, want %v", got[:w], pending)
			}
		})
	}
}
