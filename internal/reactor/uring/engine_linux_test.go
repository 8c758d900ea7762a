//go:build linux

package uring

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"github.com/gocached/gocached/internal/reactor/uring/uringsys"
	"github.com/gocached/gocached/internal/store"
	"golang.org/x/sys/unix"
)

func needIOUring(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skip(err)
	}
}

// TestFallbackError: where io_uring_setup fails as it does with
// kernel.io_uring_disabled=2 or a seccomp filter (EPERM), without io_uring
// (ENOSYS) or on a kernel too old for the ring's flags (EINVAL), New
// returns one line that names io_uring, the cause and the way out.
func TestFallbackError(t *testing.T) {
	saved := uringsys.Setup
	t.Cleanup(func() { uringsys.Setup = saved })
	for errno, want := range map[unix.Errno]string{
		unix.EPERM:  "io_uring is ",
		unix.ENOSYS: "no io_uring",
		unix.EINVAL: "Linux 6.1",
	} {
		uringsys.Setup = func(uint32, *uringsys.Params) (int, error) { return -1, errno }
		eng, err := New(reactor.Config{Listen: "127.0.0.1", NewSession: func() reactor.Session { return nil }})
		if err == nil {
			eng.Shutdown(t.Context())
			t.Fatalf("%v: New succeeded", errno)
		}
		msg := err.Error()
		if !strings.Contains(msg, want) || !strings.Contains(msg, "--engine=epoll") || strings.Contains(msg, "\n") {
			t.Errorf("%v: error %q, want one line with %q and the epoll hint", errno, msg, want)
		}
		if !errors.Is(err, errNoIOUring) || Available() == nil {
			t.Errorf("%v: Available/errNoIOUring disagree with New: %v", errno, err)
		}
	}
}

// serveEngine starts an engine on cfg, serving until the test's cleanup
// shuts it down, which must end without an error.
func serveEngine(t *testing.T, cfg reactor.Config) reactor.Engine {
	t.Helper()
	eng, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- eng.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := eng.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return eng
}

// TestSessionPanicClosesOneConnection: a Session that panics closes its
// own connection; the reactor and its other connections carry on.
func TestSessionPanicClosesOneConnection(t *testing.T) {
	needIOUring(t)
	eng := serveEngine(t, reactor.Config{Listen: "127.0.0.1", Threads: 1,
		NewSession: enginetest.NewFakeStore().NewSession(0)})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", eng.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		return c
	}
	good, bad := dial(), dial()
	if _, err := bad.Write([]byte("panic\r\n")); err != nil {
		t.Fatal(err)
	}
	if n, err := bad.Read(make([]byte, 16)); err != io.EOF {
		t.Fatalf("panicking connection read %d, %v; want EOF", n, err)
	}
	if _, err := good.Write([]byte("get k\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(good, buf); err != nil || string(buf) != "END\r\n" {
		t.Fatalf("other connection after the panic: %q, %v", buf, err)
	}
}

// TestStatsReactorsShowsRingSettings: `stats reactors` reports the ring's
// setup and the NAPI busy-poll settings as the kernel accepted them.
func TestStatsReactorsShowsRingSettings(t *testing.T) {
	needIOUring(t)
	s := enginetest.Start(t, New, reactor.Config{Threads: 2,
		Epoll: reactor.EpollConfig{BusyPollUsecs: 50, PreferBusyPoll: true, PollMode: "napibusy"}}, enginetest.Options{})
	st := s.Dial(t).Stats("reactors")
	for _, id := range []string{"0", "1"} {
		p := "reactor:" + id + ":"
		if f := st[p+"setup_flags"]; !strings.Contains(f, "single_issuer") || !strings.Contains(f, "defer_taskrun") {
			t.Errorf("%ssetup_flags = %q", p, f)
		}
		if st[p+"buf_ring"] != "256x16384" || st[p+"poll_mode"] != "napibusy" {
			t.Errorf("%s buf_ring %q poll_mode %q", p, st[p+"buf_ring"], st[p+"poll_mode"])
		}
		switch st[p+"napi_tracking"] {
		case "static", "dynamic":
			if st[p+"busy_poll_usecs"] != "50" || st[p+"prefer_busy_poll"] != "1" {
				t.Errorf("%s busy_poll_usecs %q prefer %q, want 50 and 1", p, st[p+"busy_poll_usecs"], st[p+"prefer_busy_poll"])
			}
		case "off":
			t.Logf("kernel without io_uring NAPI busy polling")
		default:
			t.Errorf("%snapi_tracking = %q", p, st[p+"napi_tracking"])
		}
		for _, name := range []string{"enters", "cqes", "sqes", "max_batch", "recv_arms", "short_sends", "napi_id"} {
			if _, ok := st[p+name]; !ok {
				t.Errorf("no %s%s", p, name)
			}
		}
	}
}

// TestPartialSends: a reply far larger than the client's receive window
// comes back from the kernel in short sends, which the engine resubmits
// from where each stopped; the client gets every byte in order.
func TestPartialSends(t *testing.T) {
	needIOUring(t)
	s := enginetest.Start(t, New, reactor.Config{Threads: 1}, enginetest.Options{})
	value := make([]byte, 900<<10)
	for i := range value {
		value[i] = byte('a' + i%23)
	}
	if s.Env.Store.Set(store.ModeSet, []byte("big"), 0, 0, value, 0) != store.Stored {
		t.Fatal("set failed")
	}
	stats := s.Dial(t)
	// A small receive window from the SYN on (shrinking it later makes TCP
	// drop and retransmit), and more replies than the server's send buffer
	// holds, so the kernel must take the replies in pieces.
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 8192) })
	}}
	nc, err := d.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	const gets = 10
	if _, err := nc.Write([]byte(strings.Repeat("get big\r\n", gets))); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing until a send has come back short: a send
	// of a 900 KB reply cannot fit the socket's buffers while the 8 KiB
	// window stays shut, so the short send must come however slowly the
	// machine runs, and it is certain to have been seen before reading.
	enginetest.WaitFor(t, "a short send", func() bool {
		n, _ := strconv.Atoi(stats.Stats("reactors")["reactor:0:short_sends"])
		return n > 0
	})
	r := bufio.NewReaderSize(nc, 64<<10)
	head := "VALUE big 0 " + itoa(len(value)) + "\r\n"
	for i := range gets {
		got := make([]byte, len(head)+len(value)+len("\r\nEND\r\n"))
		if _, err := io.ReadFull(r, got); err != nil {
			t.Fatalf("reply %d: %v; reactors: %v", i, err, stats.Stats("reactors"))
		}
		if string(got) != head+string(value)+"\r\nEND\r\n" {
			t.Fatalf("reply %d corrupted", i)
		}
	}
}
func itoa(n int) string { return strconv.Itoa(n) }

// TestMoreConnectionsThanBuffers: more connections than the buffer ring
// has buffers all send at once; a receive that finds the ring empty ends
// with ENOBUFS and is re-armed once buffers come back, so every request is
// still answered. The ring is made tiny so that it runs dry for sure.
func TestMoreConnectionsThanBuffers(t *testing.T) {
	needIOUring(t)
	saved := recvBuffers
	recvBuffers = 4
	t.Cleanup(func() { recvBuffers = saved })
	s := enginetest.Start(t, New, reactor.Config{Threads: 1}, enginetest.Options{})
	if s.Env.Store.Set(store.ModeSet, []byte("k"), 0, 0, []byte("v"), 0) != store.Stored {
		t.Fatal("set failed")
	}
	const n = 64
	clients := make([]*enginetest.Client, n)
	for i := range clients {
		clients[i] = s.Dial(t)
	}
	enobufs := func() int {
		v, _ := strconv.Atoi(clients[0].Stats("reactors")["reactor:0:recv_enobufs"])
		return v
	}
	for round := 0; round < 200 && (round < 3 || enobufs() == 0); round++ {
		var wg sync.WaitGroup
		for _, c := range clients { // all at once, so completions pile up
			wg.Add(1)
			go func() { defer wg.Done(); _, _ = c.NC.Write([]byte("get k\r\n")) }()
		}
		wg.Wait()
		for i, c := range clients {
			if l := c.Line(); l != "VALUE k 0 1\r\n" {
				t.Fatalf("round %d client %d: %q", round, i, l)
			}
			c.Expect("v\r\n", "END\r\n")
		}
	}
	if enobufs() == 0 {
		t.Errorf("the 4-buffer ring never ran dry with %d clients sending at once", n)
	}
}
