package reactor

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/store"
)

// These tests run the go engine with the real protocol.Session and store, as
// cmd/gocached wires them.

func newGoTestEnv(t testing.TB, reqsPerEvent, maxConns int) *protocol.Env {
	t.Helper()
	st, err := store.New(store.Config{MemoryLimit: 64 << 20, MaxItemSize: 1 << 20})
	if err != nil {
		t.Fatalf("store.New: %v", err)
	}
	t.Cleanup(st.Close)
	return &protocol.Env{
		Store: st,
		Settings: &protocol.Settings{
			Version: "1.6.18-gocached", MaxConns: maxConns, MaxBytes: 64 << 20, ItemSizeMax: 1 << 20,
			Evictions: true, CASEnabled: true, ReqsPerEvent: reqsPerEvent, TCPBacklog: 1024,
			BindingProtocol: "ascii", Engine: "go", Verbosity: new(atomic.Int32),
		},
		StartUnix: time.Now().Unix(),
	}
}

// startGoProtocol runs the go engine with real Sessions; it returns the
// engine and its address.
func startGoProtocol(t testing.TB, cfg Config) (*goEngine, *protocol.Env, string) {
	t.Helper()
	cfg.Listen = "127.0.0.1"
	env := newGoTestEnv(t, max(cfg.ReqsPerEvent, 1), cfg.MaxConns)
	eng, err := New("go", cfg, env)
	if err != nil {
		t.Fatalf("New(go): %v", err)
	}
	if srv, ok := env.Server.(*goEngine); !ok || srv != eng.(*goEngine) {
		t.Fatalf("New did not set env.Server to the engine")
	}
	s := &goTestServer{e: eng.(*goEngine), addr: eng.Addr().String(), served: make(chan error, 1)}
	go func() { s.served <- eng.Serve() }()
	t.Cleanup(func() { s.stop(t) })
	return s.e, env, s.addr
}

func TestGoEngineProtocolClient(t *testing.T) {
	_, _, addr := startGoProtocol(t, Config{ReqsPerEvent: 20})
	mc := memcache.New(addr)
	mc.Timeout = 5 * time.Second
	if err := mc.Set(&memcache.Item{Key: "a", Value: []byte("1"), Flags: 7}); err != nil {
		t.Fatalf("Set: %v", err)
	}
	it, err := mc.Get("a")
	if err != nil || string(it.Value) != "1" || it.Flags != 7 {
		t.Fatalf("Get = %+v, %v", it, err)
	}
	if err := mc.Add(&memcache.Item{Key: "a", Value: []byte("2")}); err != memcache.ErrNotStored {
		t.Errorf("Add existing = %v, want ErrNotStored", err)
	}
	if n, err := mc.Increment("a", 41); err != nil || n != 42 {
		t.Errorf("Increment = %d, %v; want 42", n, err)
	}
	big := bytes.Repeat([]byte("v"), 900<<10) // several reads, read buffer grows to Want
	if err := mc.Set(&memcache.Item{Key: "big", Value: big}); err != nil {
		t.Fatalf("Set big: %v", err)
	}
	m, err := mc.GetMulti([]string{"a", "big", "missing"})
	if err != nil || len(m) != 2 || !bytes.Equal(m["big"].Value, big) || string(m["a"].Value) != "42" {
		t.Fatalf("GetMulti: %d items, %v", len(m), err)
	}
	if err := mc.Delete("a"); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if _, err := mc.Get("a"); err != memcache.ErrCacheMiss {
		t.Errorf("Get deleted = %v, want miss", err)
	}
}

// readUntil reads lines until one equals end, returning them all.
func readUntil(t testing.TB, r *bufio.Reader, end string) []string {
	t.Helper()
	var lines []string
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read after %d lines: %v", len(lines), err)
		}
		lines = append(lines, l)
		if l == end {
			return lines
		}
	}
}

func statsMap(t testing.TB, nc net.Conn, r *bufio.Reader, group string) map[string]string {
	t.Helper()
	fmt.Fprintf(nc, "stats%s\r\n", group)
	m := make(map[string]string)
	for _, l := range readUntil(t, r, "END\r\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == "STAT" {
			m[f[1]] = f[2]
		}
	}
	return m
}

func TestGoEngineProtocolPipelineAndStats(t *testing.T) {
	_, _, addr := startGoProtocol(t, Config{ReqsPerEvent: 20})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(nc)
	fmt.Fprintf(nc, "set k 0 0 5\r\nhello\r\n")
	if l, _ := r.ReadString('\n'); l != "STORED\r\n" {
		t.Fatalf("set: %q", l)
	}
	// 100 gets in one write: the protocol yields every 20 (-R), the engine
	// must carry on without waiting for more input.
	nc.Write([]byte(strings.Repeat("get k\r\n", 100)))
	for i := range 100 {
		got := readUntil(t, r, "END\r\n")
		if len(got) != 3 || got[1] != "hello\r\n" {
			t.Fatalf("reply %d = %q", i, got)
		}
	}
	st := statsMap(t, nc, r, "")
	if y, _ := strconv.Atoi(st["conn_yields"]); y < 4 {
		t.Errorf("conn_yields = %q, want at least 4 after 100 pipelined gets with -R 20", st["conn_yields"])
	}
	if st["curr_connections"] != "1" || st["total_connections"] != "1" || st["accepting_conns"] != "1" {
		t.Errorf("curr/total/accepting = %s/%s/%s, want 1/1/1",
			st["curr_connections"], st["total_connections"], st["accepting_conns"])
	}
	conns := statsMap(t, nc, r, " conns")
	var listening, clients int
	for k, v := range conns {
		switch {
		case strings.HasSuffix(k, ":state") && v == "conn_listening":
			listening++
		case strings.HasSuffix(k, ":listen_addr") && v == "tcp:"+addr:
			clients++
		}
	}
	if listening != 1 || clients != 1 {
		t.Errorf("stats conns: %d listeners, %d clients, want 1 and 1: %v", listening, clients, conns)
	}
}

func TestGoEngineProtocolConnLimit(t *testing.T) {
	_, _, addr := startGoProtocol(t, Config{ReqsPerEvent: 20, MaxConns: 1})
	first := memcache.New(addr)
	if err := first.Set(&memcache.Item{Key: "k", Value: []byte("v")}); err != nil {
		t.Fatalf("first client: %v", err)
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(nc)
	if l, _ := r.ReadString('\n'); l != "ERROR Too many open connections\r\n" {
		t.Fatalf("second client got %q", l)
	}
	if _, err := r.ReadByte(); err == nil {
		t.Fatalf("rejected connection stayed open")
	}
}

// BenchmarkGoEngineGet measures one loopback `get` round trip of a 100-byte
// value through the go engine and the real protocol and store.
func BenchmarkGoEngineGet(b *testing.B) {
	for _, depth := range []int{1, 16} {
		b.Run(fmt.Sprintf("pipeline=%d", depth), func(b *testing.B) {
			_, _, addr := startGoProtocol(b, Config{ReqsPerEvent: 20})
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			r := bufio.NewReaderSize(nc, 64<<10)
			fmt.Fprintf(nc, "set key:0001 0 0 100\r\n%s\r\n", strings.Repeat("x", 100))
			if l, _ := r.ReadString('\n'); l != "STORED\r\n" {
				b.Fatalf("set: %q", l)
			}
			req := []byte(strings.Repeat("get key:0001\r\n", depth))
			replyLen := len("VALUE key:0001 0 100\r\n") + 102 + len("END\r\n")
			reply := make([]byte, replyLen*depth)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += depth {
				if _, err := nc.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := readFull(r, reply); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if !bytes.HasSuffix(reply, []byte("END\r\n")) {
				b.Fatalf("reply %q", reply)
			}
		})
	}
}

func readFull(r *bufio.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
