package reactor_test

import (
	"bytes"
	"net"
	"testing"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"github.com/gocached/gocached/internal/reactor/epoll"
	"github.com/gocached/gocached/internal/reactor/portable"
	"github.com/gocached/gocached/internal/reactor/uring"
	"github.com/gocached/gocached/internal/store"
)

// engines is every engine gocached has. A new engine joins the conformance
// suite, and the benchmarks, with one line here.
var engines = []struct {
	name string
	new  reactor.Factory
}{
	{"epoll", epoll.New},
	{"go", portable.New},
	{"uring", uring.New},
}

// TestConformance runs every enginetest case against every engine.
func TestConformance(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			if !available(t, e.new) {
				t.Skipf("engine %s unavailable on this system", e.name)
			}
			for _, c := range enginetest.Cases {
				t.Run(c.Name, func(t *testing.T) { c.Run(t, e.new) })
			}
		})
	}
}

// available reports whether f can build an engine here (epoll off Linux
// cannot).
func available(t testing.TB, f reactor.Factory) bool {
	eng, err := f(reactor.Config{Listen: "127.0.0.1", Threads: 1, NewSession: func() reactor.Session { return nil }})
	if err != nil {
		t.Logf("engine unavailable: %v", err)
		return false
	}
	eng.Shutdown(t.Context())
	return true
}

// BenchmarkLoopbackGet measures get round trips of a 100-byte value on
// loopback per engine: one connection, latency-bound.
func BenchmarkLoopbackGet(b *testing.B) {
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			if !available(b, e.new) {
				b.Skipf("engine %s unavailable", e.name)
			}
			s := enginetest.Start(b, e.new, reactor.Config{Threads: 1}, enginetest.Options{})
			if s.Env.Store.Set(store.ModeSet, []byte("key"), 0, 0, bytes.Repeat([]byte("v"), 100), 0) != store.Stored {
				b.Fatal("set failed")
			}
			c, err := net.Dial("tcp", s.Addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req := []byte("get key\r\n")
			want := len("VALUE key 0 100\r\n") + 100 + len("\r\nEND\r\n")
			buf := make([]byte, 4096)
			b.ResetTimer()
			for range b.N {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < want; {
					n, err := c.Read(buf)
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
			}
		})
	}
}
