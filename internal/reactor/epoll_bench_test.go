//go:build linux

package reactor

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/store"
)

// startEngineBench runs engine name with real sessions and one reactor (or
// the go engine's goroutines) on loopback.
func startEngineBench(b *testing.B, name string) string {
	b.Helper()
	env := newEpollTestEnv(b, 20)
	eng, err := New(name, Config{Listen: "127.0.0.1", Threads: 1, MaxConns: 1024}, env)
	if err != nil {
		b.Fatal(err)
	}
	go eng.Serve()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng.Shutdown(ctx)
	})
	if env.Store.Set(store.ModeSet, []byte("key"), 0, 0, bytes.Repeat([]byte("v"), 100), 0) != store.Stored {
		b.Fatal("set failed")
	}
	return eng.Addr().String()
}

// BenchmarkLoopbackGet measures get round trips of a 100-byte value on
// loopback: one connection (latency-bound) and several in parallel.
func BenchmarkLoopbackGet(b *testing.B) {
	for _, name := range []string{"epoll", "go"} {
		b.Run(name+"/serial", func(b *testing.B) {
			addr := startEngineBench(b, name)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			benchGets(b, c, b.N)
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			addr := startEngineBench(b, name)
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close()
				r := bufio.NewReader(c)
				reply := make([]byte, len("VALUE key 0 100\r\n")+100+len("\r\nEND\r\n"))
				for pb.Next() {
					if _, err := io.WriteString(c, "get key\r\n"); err != nil {
						b.Error(err)
						return
					}
					if _, err := io.ReadFull(r, reply); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func benchGets(b *testing.B, c net.Conn, n int) {
	b.ReportAllocs()
	r := bufio.NewReader(c)
	req := []byte("get key\r\n")
	reply := make([]byte, len("VALUE key 0 100\r\n")+100+len("\r\nEND\r\n"))
	b.ResetTimer()
	for range n {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r, reply); err != nil {
			b.Fatal(err)
		}
	}
}
