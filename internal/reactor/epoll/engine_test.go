//go:build linux

package epoll

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"golang.org/x/sys/unix"
)

// startFake runs an epoll engine with enginetest.Fake sessions on a free loopback port.
func startFake(t testing.TB, cfg reactor.Config, maxReqs int) *engine {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1"
	}
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	e, err := newTestEngine(cfg, enginetest.NewFakeStore().NewSession(maxReqs))
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- e.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return e
}

func dial(t testing.TB, e *engine) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", e.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	return c
}

// newTestEngine builds the engine with Sessions from newSession.
func newTestEngine(cfg reactor.Config, newSession func() reactor.Session) (*engine, error) {
	cfg.NewSession = newSession
	return newEngine(cfg)
}

func readExactly(t testing.TB, r io.Reader, want []byte) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("reading %d bytes: %v", len(want), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("reply mismatch: got %q..., want %q...", trunc(got), trunc(want))
	}
}

func trunc(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

func TestEpollPipelining(t *testing.T) {
	tests := []struct {
		name    string
		maxReqs int
		chunk   int // client write size; 0 = all at once
		sizes   []int
		rounds  int
	}{
		{"one write", 20, 0, []int{1, 10, 100, 1000}, 0},
		{"split every byte", 20, 1, []int{3, 5}, 0},
		{"split 7", 4, 7, []int{0, 17, 200}, 0},
		{"R=1", 1, 0, []int{2, 4, 8, 16, 32}, 0},
		// Fewer rounds of values up to 1 MiB, each past a read buffer and
		// a turn's output: under the race detector every MiB the engine
		// moves costs a second or so on a busy machine.
		{"large values", 20, 0, []int{100 << 10, 1 << 20, 1}, 14},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startFake(t, reactor.Config{}, tc.maxReqs)
			c := dial(t, e)
			var req, want bytes.Buffer
			rounds := tc.rounds
			if rounds == 0 {
				rounds = 50
			}
			for i := range rounds {
				n := tc.sizes[i%len(tc.sizes)]
				fmt.Fprintf(&req, "gen %d\r\n", n)
				want.Write(enginetest.FakeReply(n))
				if i%10 == 3 {
					fmt.Fprintf(&req, "set k %d\r\n%s\r\n", n, enginetest.FakeValue(n))
					want.WriteString("STORED\r\n")
				}
			}
			go func() {
				b := req.Bytes()
				step := tc.chunk
				if step == 0 {
					step = len(b)
				}
				for len(b) > 0 {
					k := min(step, len(b))
					if _, err := c.Write(b[:k]); err != nil {
						return
					}
					b = b[k:]
				}
			}()
			readExactly(t, c, want.Bytes())
			if tc.maxReqs == 1 && e.ServerStats().ConnYields == 0 {
				t.Error("conn_yields stayed 0 with -R 1 and pipelined requests")
			}
		})
	}
}

func TestEpollLargeSet(t *testing.T) {
	e := startFake(t, reactor.Config{}, 20)
	c := dial(t, e)
	for _, n := range []int{64 << 10, 1 << 20, 3 << 20, 10} {
		go fmt.Fprintf(c, "set k %d\r\n%s\r\ngen 3\r\n", n, enginetest.FakeValue(n))
		readExactly(t, c, append([]byte("STORED\r\n"), enginetest.FakeReply(3)...))
	}
}

func TestEpollHalfCloseAndQuit(t *testing.T) {
	e := startFake(t, reactor.Config{}, 20)
	t.Run("half close", func(t *testing.T) {
		c := dial(t, e)
		io.WriteString(c, "gen 5\r\ngen 6\r\n")
		c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := append(enginetest.FakeReply(5), enginetest.FakeReply(6)...); !bytes.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	t.Run("quit", func(t *testing.T) {
		c := dial(t, e)
		io.WriteString(c, "gen 2\r\nquit\r\ngen 3\r\n")
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := enginetest.FakeReply(2); !bytes.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
	enginetest.WaitFor(t, "connections to close", func() bool { return int64(e.Acct.Clients()) == 0 })
}

func TestEpollBackpressure(t *testing.T) {
	e := startFake(t, reactor.Config{}, 20)
	hog := dial(t, e)
	const value, count = 100 << 10, 100_000
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	// The hog pipelines 10 GB worth of replies and never reads.
	wrote := make(chan error, 1)
	go func() {
		req := bytes.Repeat([]byte("gen "+strconv.Itoa(value)+"\r\n"), 1000)
		for i := 0; i < count/1000; i++ {
			if _, err := hog.Write(req); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	// The server stops reading the hog once its unsent replies pass maxPending:
	// the bytes it has read stop growing.
	var lastRead uint64
	stable := 0
	enginetest.WaitFor(t, "the hog's reactor to stop reading", func() bool {
		time.Sleep(20 * time.Millisecond)
		s := e.ServerStats()
		if s.BytesRead == lastRead && s.BytesWritten > 0 {
			stable++
		} else {
			stable = 0
		}
		lastRead = s.BytesRead
		return stable >= 10
	})
	if s := e.ServerStats(); s.BytesRead >= uint64(count*len("gen 102400\r\n")) {
		t.Fatalf("server read the whole pipeline (%d bytes) while replies were not read", s.BytesRead)
	}

	other := dial(t, e)
	r := bufio.NewReader(other)
	for i := 0; i < 200; i++ {
		fmt.Fprintf(other, "gen %d\r\n", i)
		readExactly(t, r, enginetest.FakeReply(i))
	}

	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	// Bound: reactor.MaxUnsent plus one -R batch of replies plus buffers, with slack for the race detector.
	if limit := int64(64 << 20); grown > limit {
		t.Errorf("heap grew by %d MiB while a client did not read; want < %d MiB", grown>>20, limit>>20)
	}
	t.Logf("heap growth with a stalled 10 GB pipeline: %.1f MiB", float64(grown)/(1<<20))
	hog.Close()
	<-wrote
	enginetest.WaitFor(t, "the hog to be closed", func() bool { return int64(e.Acct.Clients()) == 1 })
}

func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestEpollFDLeak(t *testing.T) {
	e := startFake(t, reactor.Config{Threads: 3}, 20)
	// Warm up so lazily opened runtime fds are in the baseline.
	c := dial(t, e)
	c.Close()
	enginetest.WaitFor(t, "warm-up close", func() bool { return int64(e.Acct.Clients()) == 0 })
	runtime.GC() // let finalizers close what earlier tests dropped
	time.Sleep(50 * time.Millisecond)
	base := openFDs(t)

	const cycles, workers = 10_000, 4
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < cycles; i += workers {
				c, err := net.DialTimeout("tcp", e.Addr().String(), 5*time.Second)
				if err != nil {
					errs <- err
					return
				}
				if i%3 == 0 { // some do a request first, some close at once
					c.SetDeadline(time.Now().Add(5 * time.Second))
					io.WriteString(c, "gen 1\r\n")
					buf := make([]byte, len(enginetest.FakeReply(1)))
					if _, err := io.ReadFull(c, buf); err != nil {
						errs <- err
						c.Close()
						return
					}
				}
				c.Close()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A dial returns once the kernel has queued the connection; the engine
	// may accept the last ones after every client has closed (seen under
	// load: 9,999 of 10,000 counted when the clients were done), and only
	// then count them, so wait for the count before the clients to go.
	enginetest.WaitFor(t, fmt.Sprintf("%d connections accepted", cycles), func() bool {
		return e.ServerStats().TotalConnections >= cycles
	})
	enginetest.WaitFor(t, "all connections to close", func() bool { return int64(e.Acct.Clients()) == 0 })
	// Other goroutines of the test binary may close fds meanwhile, never open
	// 10k of them: only growth is a leak.
	if got := openFDs(t); got > base {
		t.Errorf("open fds: %d before %d connect/close cycles, %d after", base, cycles, got)
	}
}

func TestEpollConnLimit(t *testing.T) {
	e := startFake(t, reactor.Config{MaxConns: 3, Threads: 2}, 20)
	var conns []net.Conn
	for i := 0; i < 3; i++ {
		c := dial(t, e)
		io.WriteString(c, "gen 1\r\n")
		readExactly(t, c, enginetest.FakeReply(1))
		conns = append(conns, c)
	}
	extra := dial(t, e)
	got, err := io.ReadAll(extra)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatal(err)
	}
	if string(got) != string(reactor.RejectMessage) {
		t.Fatalf("connection beyond -c got %q, want %q", got, reactor.RejectMessage)
	}
	if s := e.ServerStats(); s.RejectedConnections != 1 || s.CurrConnections != 3 {
		t.Fatalf("rejected=%d curr=%d, want 1 and 3", s.RejectedConnections, s.CurrConnections)
	}
	conns[0].Close()
	enginetest.WaitFor(t, "a slot to free", func() bool { return int64(e.Acct.Clients()) == 2 })
	c := dial(t, e)
	io.WriteString(c, "gen 4\r\n")
	readExactly(t, c, enginetest.FakeReply(4))
}

func TestEpollShutdown(t *testing.T) {
	t.Run("flushes in-flight replies", func(t *testing.T) {
		e, err := newTestEngine(reactor.Config{Listen: "127.0.0.1", Threads: 2}, enginetest.NewFakeStore().NewSession(20))
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- e.Serve() }()
		c := dial(t, e)
		// A reply larger than the socket buffers is still being written at shutdown.
		io.WriteString(c, "gen 1\r\n")
		readExactly(t, c, enginetest.FakeReply(1))
		io.WriteString(c, "gen 8000000\r\n")
		enginetest.WaitFor(t, "the reply to be under way", func() bool { return e.ServerStats().BytesWritten > 1<<20 })
		done := make(chan error, 1)
		go func() { done <- e.Shutdown(context.Background()) }()
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, enginetest.FakeReply(8000000)) {
			t.Fatalf("got %d bytes after shutdown, want the whole %d-byte reply", len(got), len(enginetest.FakeReply(8000000)))
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := <-served; err != nil {
			t.Fatalf("Serve returned %v after Shutdown", err)
		}
		if _, err := net.DialTimeout("tcp", e.Addr().String(), time.Second); err == nil {
			t.Error("still accepting after Shutdown")
		}
	})
	t.Run("context expiry closes stuck clients", func(t *testing.T) {
		e, err := newTestEngine(reactor.Config{Listen: "127.0.0.1", Threads: 1}, enginetest.NewFakeStore().NewSession(20))
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- e.Serve() }()
		c := dial(t, e)
		io.WriteString(c, "gen 8000000\r\n") // never read
		enginetest.WaitFor(t, "the reply to be under way", func() bool { return e.ServerStats().BytesWritten > 0 })
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if err := e.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want deadline exceeded", err)
		}
		if err := <-served; err != nil {
			t.Fatalf("Serve = %v", err)
		}
	})
	t.Run("before Serve", func(t *testing.T) {
		base := openFDs(t)
		e, err := newTestEngine(reactor.Config{Listen: "127.0.0.1", Threads: 3}, enginetest.NewFakeStore().NewSession(20))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := openFDs(t); got != base {
			t.Errorf("fds: %d before, %d after an engine that never served", base, got)
		}
	})
}

func TestEpollFairness(t *testing.T) {
	// One reactor, -R 1: a client with a huge pipeline must not starve another.
	e := startFake(t, reactor.Config{Threads: 1}, 1)
	hog := dial(t, e)
	go func() {
		req := bytes.Repeat([]byte("gen 1\r\n"), 20000)
		hog.Write(req)
	}()
	go io.Copy(io.Discard, hog)
	other := dial(t, e)
	for i := 0; i < 50; i++ {
		io.WriteString(other, "gen 3\r\n")
		readExactly(t, other, enginetest.FakeReply(3))
	}
	enginetest.WaitFor(t, "yields", func() bool { return e.ServerStats().ConnYields > 0 })
}

func TestEpollPortInUse(t *testing.T) {
	first := startFake(t, reactor.Config{Threads: 2}, 20)
	port := first.Addr().(*net.TCPAddr).Port
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, taken := range []int{port, other.Addr().(*net.TCPAddr).Port} {
		base := openFDs(t)
		e, err := newTestEngine(reactor.Config{Listen: "127.0.0.1", Port: taken, Threads: 2}, enginetest.NewFakeStore().NewSession(20))
		if err == nil {
			e.Shutdown(context.Background())
			t.Fatalf("a second server on port %d started (it would share the port's connections)", taken)
		}
		if !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("port %d: %v, want address already in use", taken, err)
		}
		if got := openFDs(t); got != base {
			t.Errorf("failed start leaked fds: %d -> %d", base, got)
		}
	}
}

func TestEpollAcceptOutOfFDs(t *testing.T) {
	e := startFake(t, reactor.Config{Threads: 1}, 20)
	var orig unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &orig); err != nil {
		t.Fatal(err)
	}
	lim := orig
	lim.Cur = uint64(openFDs(t) + 4)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &orig); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer restore()
	// Dial until the server cannot accept (each connection costs one fd on
	// each side); the last dial may fail itself.
	var clients []net.Conn
	for len(clients) < 6 && e.ServerStats().ListenDisabledNum == 0 {
		c, err := net.DialTimeout("tcp", e.Addr().String(), time.Second)
		if err != nil {
			break
		}
		clients = append(clients, c)
		time.Sleep(20 * time.Millisecond)
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	enginetest.WaitFor(t, "accept to pause", func() bool { return e.ServerStats().ListenDisabledNum > 0 })
	// While out of fds the reactor must sleep between retries, not spin.
	w0 := e.reactors[0].stats.epollWaits.Load()
	time.Sleep(200 * time.Millisecond)
	if w := e.reactors[0].stats.epollWaits.Load() - w0; w > 200 {
		t.Errorf("%d epoll_waits in 200 ms while out of fds: the reactor spins", w)
	}
	restore()
	last := clients[len(clients)-1]
	last.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(last, "gen 2\r\n")
	readExactly(t, last, enginetest.FakeReply(2))
}
