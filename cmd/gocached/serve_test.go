package main

import (
	"bufio"
	"fmt"
	"github.com/gocached/gocached/internal/config"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

// TestServesClients runs the binary on each engine and checks that the flags
// reach the store, the protocol and the engine.
func TestServesClients(t *testing.T) {
	for _, engine := range []string{"go", config.DefaultEngine()} {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, "--engine="+engine, "-c", "7", "-I", "2k", "-o", "slab_chunk_max=2048", "-m", "16", "-R", "5")
			mc := memcache.New(s.addr)
			mc.Timeout = 5 * time.Second
			if err := mc.Set(&memcache.Item{Key: "k", Value: []byte("hello"), Flags: 3}); err != nil {
				t.Fatalf("Set: %v", err)
			}
			it, err := mc.Get("k")
			if err != nil || string(it.Value) != "hello" || it.Flags != 3 {
				t.Fatalf("Get = %+v, %v", it, err)
			}
			if err := mc.Set(&memcache.Item{Key: "big", Value: make([]byte, 4096)}); err == nil {
				t.Errorf("Set of 4 KB with -I 2k succeeded, want a server error")
			}

			nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(nc)
			fmt.Fprintf(nc, "version\r\n")
			if l, _ := r.ReadString('\n'); l != "VERSION "+version+"\r\n" {
				t.Errorf("version reply %q, want %q", l, "VERSION "+version)
			}
			fmt.Fprintf(nc, "stats settings\r\n")
			settings := map[string]string{}
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("stats settings: %v", err)
				}
				if l == "END\r\n" {
					break
				}
				if f := strings.Fields(l); len(f) == 3 {
					settings[f[1]] = f[2]
				}
			}
			_, port, _ := net.SplitHostPort(s.addr)
			want := map[string]string{
				"maxconns": "7", "tcpport": port, "item_size_max": "2048", "maxbytes": fmt.Sprint(16 << 20),
				"reqs_per_event": "5", "verbosity": "1", "evictions": "on", "cas_enabled": "yes",
			}
			for k, v := range want {
				if settings[k] != v {
					t.Errorf("stats settings %s = %q, want %q", k, settings[k], v)
				}
			}
		})
	}
}

func TestGoEngineThreadsFlag(t *testing.T) {
	s := startServer(t, "--engine=go", "-t", "1", "--pin-cpus", "0")
	nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	threads := readStats(t, nc, "")["threads"]
	if threads != "1" {
		t.Errorf("stats threads = %q with --engine=go -t 1, want 1", threads)
	}
	if log := s.stderr.String(); !strings.Contains(log, "flag does not apply to this engine") || !strings.Contains(log, "--pin-cpus") {
		t.Errorf("no warning about --pin-cpus on the go engine; log:\n%s", log)
	}
}
