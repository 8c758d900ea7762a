//go:build linux

package uring

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"github.com/gocached/gocached/internal/reactor/epoll"
	"github.com/gocached/gocached/internal/store"
	"golang.org/x/sys/unix"
)

// BenchmarkDepth1 is issue 12's latency-bound shape in one process: 64
// connections, each with one get of a 100-byte value in flight, against
// one reactor of each Linux engine. Besides ns/op it reports the process's
// CPU per request (cpu-ns/op; the clients' share is the same for both
// engines, so the difference is the servers') and, for uring, how many
// requests each io_uring_enter served. `go run ./bench/cmd/enginecmp
// --targets epoll,uring,memcached` measures the server alone, pinned.
func BenchmarkDepth1(b *testing.B) {
	needIOUring(b)
	for _, e := range []struct {
		name string
		new  reactor.Factory
	}{{"epoll", epoll.New}, {"uring", New}} {
		for _, conns := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/%dx1", e.name, conns), func(b *testing.B) { benchDepth1(b, e.new, conns) })
		}
	}
}

func benchDepth1(b *testing.B, f reactor.Factory, conns int) {
	s := enginetest.Start(b, f, reactor.Config{Threads: 1}, enginetest.Options{})
	value := bytes.Repeat([]byte("v"), 100)
	if s.Env.Store.Set(store.ModeSet, []byte("key"), 0, 0, value, 0) != store.Stored {
		b.Fatal("set failed")
	}
	clients := make([]*enginetest.Client, conns)
	for i := range clients {
		clients[i] = s.Dial(b)
	}
	req := []byte("get key\r\n")
	reply := len("VALUE key 0 100\r\n") + 100 + len("\r\nEND\r\n")
	var before, after unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &before)
	start := time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, c := range clients {
		n := b.N / conns
		if i < b.N%conns {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, reply)
			for range n {
				if _, err := c.NC.Write(req); err != nil {
					b.Error(err)
					return
				}
				if _, err := io.ReadFull(c.NC, buf); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	_ = unix.Getrusage(unix.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	if st := clients[0].Stats("reactors"); st["reactor:0:enters"] != "" {
		var enters float64
		fmt.Sscan(st["reactor:0:enters"], &enters)
		if enters > 0 {
			b.ReportMetric(float64(b.N)/enters, "req/enter")
		}
	}
}
