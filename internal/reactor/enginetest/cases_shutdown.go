package enginetest

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/store"
)

// gracefulShutdown: the replies to requests already sent go out, then the
// connections close, Serve returns nil and the port stops accepting.
func gracefulShutdown(t *testing.T, f reactor.Factory) {
	s, served := StartManual(t, f, reactor.Config{}, Options{})
	idle := s.Dial(t)
	// Accepted for sure (a connection still in the listen queue when the
	// listener closes is reset by the kernel, not closed by the engine).
	idle.Send("version\r\n")
	idle.Line()
	busy := s.Dial(t)
	busy.Send("set k 0 0 1\r\nx\r\n")
	busy.Expect("STORED\r\n")
	busy.Send(strings.Repeat("get k\r\n", 200))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Eng.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
	if s.Eng.ServerStats().AcceptingConns {
		t.Errorf("accepting_conns still 1 after Shutdown")
	}
	// Whatever was read before the shutdown is answered whole.
	for {
		l, err := busy.R.ReadString('\n')
		if err != nil {
			break
		}
		if l != "VALUE k 0 1\r\n" {
			t.Fatalf("busy client got %q", l)
		}
		busy.Expect("x\r\n", "END\r\n")
	}
	idle.ExpectEOF()
	if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		c.Close()
		t.Errorf("still accepting on %s after Shutdown", s.Addr)
	}
}

// gracefulShutdownPipeline: a client whose pipeline of large values backs
// up (replies unread, values going out in pieces) when Shutdown begins
// still gets every reply to what the engine had read, each value whole,
// then EOF: the drain finishes a connection as a half-close does, it does
// not cut it after the replies already produced (which ended a value
// partway on the epoll and io_uring engines).
func gracefulShutdownPipeline(t *testing.T, f reactor.Factory) {
	s, served := StartManual(t, f, reactor.Config{Threads: 1}, Options{})
	value := strings.Repeat("v", 300<<10) // sent in pieces (above the 64 KiB chunk)
	if s.Env.Store.Set(store.ModeSet, []byte("big"), 0, 0, []byte(value), 0) != store.Stored {
		t.Fatal("could not store the value")
	}
	const gets = 20 // 6 MB of replies: more than the socket buffers hold
	c := s.Dial(t)
	c.Send(strings.Repeat("get big\r\n", gets) + "mn\r\n")
	waitBackedUp(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- s.Eng.Shutdown(ctx) }()
	time.Sleep(100 * time.Millisecond) // the drain begins before the client reads on
	header := "VALUE big 0 " + strconv.Itoa(len(value)) + "\r\n"
	for i := range gets {
		if l, err := c.R.ReadString('\n'); err != nil || l != header {
			t.Fatalf("reply %d: %q, %v; want %q", i, trunc(l), err, header)
		}
		body := make([]byte, len(value)+2)
		if _, err := io.ReadFull(c.R, body); err != nil {
			t.Fatalf("reply %d: value cut short: %v", i, err)
		}
		if string(body) != value+"\r\n" {
			t.Fatalf("reply %d: value corrupted", i)
		}
		c.Expect("END\r\n")
	}
	c.Expect("MN\r\n")
	c.ExpectEOF()
	if err := <-stopped; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve after Shutdown: %v", err)
	}
}

// shutdownDeadline: a client that never reads keeps replies pending; when
// Shutdown's context ends the engine closes it anyway and says so.
func shutdownDeadline(t *testing.T, f reactor.Factory) {
	s, served := StartManual(t, f, reactor.Config{Threads: 1}, Options{})
	value := strings.Repeat("x", 100<<10)
	if s.Env.Store.Set(store.ModeSet, []byte("big"), 0, 0, []byte(value), 0) != store.Stored {
		t.Fatal("could not store the value")
	}
	hog := s.Dial(t)
	hog.Send(strings.Repeat("get big\r\n", 500)) // 50 MB of replies, never read
	// Stuck: the socket buffers are full and the engine holds a backlog it
	// cannot write (BytesWritten stops moving). Before that, a reply the
	// socket took whole may leave nothing pending at the instant of
	// Shutdown, and the connection may close cleanly.
	waitBackedUp(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := s.Eng.Shutdown(ctx); err == nil {
		t.Errorf("Shutdown with a stuck client returned nil, want the context's error")
	}
	if d := time.Since(start); d > 7*time.Second {
		t.Errorf("Shutdown took %v after its deadline", d)
	}
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}

// halfCloseAndQuit: a client that sends a request and shuts its side still
// gets the reply; quit closes after earlier replies.
func halfCloseAndQuit(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	c.Send("set k 0 0 2\r\nhi\r\nget k\r\n")
	if err := c.NC.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.Expect("STORED\r\n", "VALUE k 0 2\r\n", "hi\r\n", "END\r\n")
	c.ExpectEOF()
	q := s.Dial(t)
	q.Send("get k\r\nquit\r\nget k\r\n")
	q.Expect("VALUE k 0 2\r\n", "hi\r\n", "END\r\n")
	q.ExpectEOF()
}

// waitBackedUp waits until the engine has written more than 1 MiB and its
// writes stopped moving for 100 ms: a client's socket buffers are full and
// the engine holds a backlog it cannot write.
func waitBackedUp(t *testing.T, s *Server) {
	t.Helper()
	var last uint64
	stable := 0
	WaitFor(t, "replies to back up", func() bool {
		time.Sleep(20 * time.Millisecond)
		w := s.Eng.ServerStats().BytesWritten
		if w > 1<<20 && w == last {
			stable++
		} else {
			stable = 0
		}
		last = w
		return stable >= 5
	})
}
