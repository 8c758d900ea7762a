//go:build linux

package reactor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/store"
)

// These tests run the epoll engine with the real protocol.Session and store.

func newEpollTestEnv(t testing.TB, reqsPerEvent int) *protocol.Env {
	t.Helper()
	st, err := store.New(store.Config{MemoryLimit: 64 << 20, MaxItemSize: 2 << 20})
	if err != nil {
		t.Fatalf("store.New: %v", err)
	}
	t.Cleanup(st.Close)
	return &protocol.Env{
		Store: st,
		Settings: &protocol.Settings{
			Version: "1.6.18-gocached", MaxConns: 1024, MaxBytes: 64 << 20, ItemSizeMax: 2 << 20,
			Evictions: true, CASEnabled: true, ReqsPerEvent: reqsPerEvent, TCPBacklog: 1024,
			BindingProtocol: "ascii", Engine: "epoll", Verbosity: new(atomic.Int32),
		},
		StartUnix: time.Now().Unix(),
	}
}

func startEpollProtocol(t testing.TB, cfg Config) (*epollEngine, *protocol.Env) {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1"
	}
	env := newEpollTestEnv(t, max(cfg.ReqsPerEvent, 20))
	eng, err := New("epoll", cfg, env)
	if err != nil {
		t.Fatalf("New(epoll): %v", err)
	}
	e := eng.(*epollEngine)
	if env.Server != e {
		t.Fatal("New did not set env.Server to the engine")
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
	return e, env
}

func TestEpollProtocolClient(t *testing.T) {
	e, _ := startEpollProtocol(t, Config{Threads: 2})
	mc := memcache.New(e.Addr().String())
	mc.Timeout = 5 * time.Second
	if err := mc.Set(&memcache.Item{Key: "k", Value: []byte("v1"), Flags: 7}); err != nil {
		t.Fatal(err)
	}
	it, err := mc.Get("k")
	if err != nil || string(it.Value) != "v1" || it.Flags != 7 {
		t.Fatalf("Get = %+v, %v", it, err)
	}
	if err := mc.Add(&memcache.Item{Key: "k", Value: []byte("x")}); err != memcache.ErrNotStored {
		t.Fatalf("Add on existing = %v", err)
	}
	it.Value = []byte("v2")
	if err := mc.CompareAndSwap(it); err != nil {
		t.Fatalf("CAS: %v", err)
	}
	if err := mc.Set(&memcache.Item{Key: "n", Value: []byte("40")}); err != nil {
		t.Fatal(err)
	}
	if v, err := mc.Increment("n", 2); err != nil || v != 42 {
		t.Fatalf("Increment = %d, %v", v, err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), (1<<20)/16)
	if err := mc.Set(&memcache.Item{Key: "big", Value: big}); err != nil {
		t.Fatal(err)
	}
	got, err := mc.GetMulti([]string{"k", "n", "big", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || string(got["k"].Value) != "v2" || string(got["n"].Value) != "42" || !bytes.Equal(got["big"].Value, big) {
		t.Fatalf("GetMulti: %d items", len(got))
	}
	if err := mc.Delete("k"); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Get("k"); err != memcache.ErrCacheMiss {
		t.Fatalf("Get after delete = %v", err)
	}
}

// request sends req and reads until the reply ends with end.
func request(t testing.TB, c net.Conn, r *bufio.Reader, req, end string) string {
	t.Helper()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for !strings.HasSuffix(b.String(), end) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v (read %q)", req, err, b.String())
		}
		b.WriteString(line)
	}
	return b.String()
}

func TestEpollProtocolPipelineAndStats(t *testing.T) {
	e, _ := startEpollProtocol(t, Config{Threads: 3, ReqsPerEvent: 4})
	c := dial(t, e)
	r := bufio.NewReader(c)
	var req, want strings.Builder
	for i := range 100 {
		fmt.Fprintf(&req, "set key%d 0 0 %d\r\nvalue%d\r\nget key%d\r\n", i, len(fmt.Sprint("value", i)), i, i)
		fmt.Fprintf(&want, "STORED\r\nVALUE key%d 0 %d\r\nvalue%d\r\nEND\r\n", i, len(fmt.Sprint("value", i)), i)
	}
	got := make([]byte, want.Len())
	go io.WriteString(c, req.String())
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Fatalf("pipelined replies differ:\n%q\nwant\n%q", trunc(got), trunc([]byte(want.String())))
	}
	stats := request(t, c, r, "stats\r\n", "END\r\n")
	for _, line := range []string{"STAT threads 3\r\n", "STAT curr_connections 1\r\n"} {
		if !strings.Contains(stats, line) {
			t.Errorf("stats lacks %q", line)
		}
	}
	if strings.Contains(stats, "STAT conn_yields 0\r\n") {
		t.Error("conn_yields 0 after 200 pipelined requests with -R 4")
	}
	reactors := request(t, c, r, "stats reactors\r\n", "END\r\n")
	for i := range 3 {
		for _, f := range reactorFields {
			if !strings.Contains(reactors, fmt.Sprintf("STAT reactor:%d:%s ", i, f)) {
				t.Errorf("stats reactors lacks reactor:%d:%s", i, f)
			}
		}
	}
	conns := request(t, c, r, "stats conns\r\n", "END\r\n")
	if !strings.Contains(conns, "conn_listening") || !strings.Contains(conns, "tcp:"+c.LocalAddr().String()) {
		t.Errorf("stats conns: %q", conns)
	}
	if reply := request(t, c, r, "quit\r\n", ""); reply != "" {
		t.Errorf("quit answered %q", reply)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("after quit: %v, want EOF", err)
	}
}

// The hog pipelines 100k gets of a 100 KB value and never reads: 10 GB of
// replies. The server must stop reading it, stay within bounded memory, and
// keep answering others.
func TestEpollProtocolBackpressure(t *testing.T) {
	e, env := startEpollProtocol(t, Config{Threads: 1})
	value := bytes.Repeat([]byte("x"), 100<<10)
	if env.Store.Set(store.ModeSet, []byte("big"), 0, 0, value, 0) != store.Stored {
		t.Fatal("could not store the value")
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	hog := dial(t, e)
	go func() {
		req := bytes.Repeat([]byte("get big\r\n"), 1000)
		for range 100 {
			if _, err := hog.Write(req); err != nil {
				return
			}
		}
	}()
	var lastRead uint64
	stable := 0
	waitFor(t, "the server to stop reading the hog", func() bool {
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
	if lastRead >= 100_000*uint64(len("get big\r\n")) {
		t.Fatalf("server read the whole pipeline (%d bytes)", lastRead)
	}
	other := dial(t, e)
	r := bufio.NewReader(other)
	for range 100 {
		if got := request(t, other, r, "set small 0 0 1\r\nx\r\n", "\r\n"); got != "STORED\r\n" {
			t.Fatalf("other client got %q", got)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap growth with a stalled 10 GB pipeline: %.1f MiB (server read %d of %d request bytes)",
		float64(grown)/(1<<20), lastRead, 100_000*len("get big\r\n"))
	if limit := int64(64 << 20); grown > limit {
		t.Errorf("heap grew %d MiB; want < %d MiB", grown>>20, limit>>20)
	}
}
