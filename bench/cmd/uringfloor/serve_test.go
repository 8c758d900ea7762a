//go:build linux

package main

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/bench/floor"
	"golang.org/x/sys/unix"
)

// startServe runs serve on a listener of a free loopback port and returns
// the address. The cleanup (after the test's connections' own, which run
// first) shuts the listener down, which ends the multishot accept, and
// waits for serve to return.
func startServe(t *testing.T) string {
	t.Helper()
	lfd, err := floor.Listen([4]byte{127, 0, 0, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(lfd)
	if err != nil {
		unix.Close(lfd)
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(lfd) }()
	t.Cleanup(func() {
		defer unix.Close(lfd)
		if err := unix.Shutdown(lfd, unix.SHUT_RDWR); err != nil {
			t.Errorf("shutdown listener: %v", err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not return after the listener was shut down")
		}
	})
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func hit(key string) string {
	return "VALUE " + key + " 0 100\r\n" + strings.Repeat("x", 100) + "\r\nEND\r\n"
}

// TestServeOverSocket: over real connections the io_uring loop answers
// gets and sets, pipelined or split across writes, and a pipeline larger
// than one receive buffer (several receives, replies larger than one
// send may take).
func TestServeOverSocket(t *testing.T) {
	var big, bigWant strings.Builder
	for i := range 2000 { // about 24 KB of requests, 280 KB of replies
		key := "key" + strconv.Itoa(i)
		big.WriteString("get " + key + "\r\n")
		bigWant.WriteString(hit(key))
	}
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"get", []string{"get k1\r\n"}, hit("k1")},
		{"set then get", []string{"set k 0 0 5\r\nhello\r\nget k\r\n"}, "STORED\r\n" + hit("k")},
		{"split across writes", []string{"ge", "t a\r", "\nset b 0 0 3\r\nx", "yz\r\n"}, hit("a") + "STORED\r\n"},
		{"unknown command", []string{"version\r\n"}, "ERROR\r\n"},
		{"large pipeline", []string{big.String()}, bigWant.String()},
	}
	addr := startServe(t)
	for _, tt := range tests {
		c := dial(t, addr)
		for _, w := range tt.writes {
			if _, err := io.WriteString(c, w); err != nil {
				t.Fatalf("%s: write: %v", tt.name, err)
			}
		}
		got := make([]byte, len(tt.want))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatalf("%s: read: %v (got %q)", tt.name, err, got)
		}
		if !bytes.Equal(got, []byte(tt.want)) {
			t.Errorf("%s: got %.200q, want %.200q", tt.name, got, tt.want)
		}
	}
}

// TestServeManyConnections: interleaved clients each get their own
// replies.
func TestServeManyConnections(t *testing.T) {
	addr := startServe(t)
	conns := make([]net.Conn, 20)
	for i := range conns {
		conns[i] = dial(t, addr)
	}
	for round := range 5 {
		for i, c := range conns {
			if _, err := io.WriteString(c, "get c"+strconv.Itoa(i)+"r"+strconv.Itoa(round)+"\r\n"); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range conns {
			want := hit("c" + strconv.Itoa(i) + "r" + strconv.Itoa(round))
			got := make([]byte, len(want))
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
				t.Fatalf("conn %d round %d: %.200q, %v", i, round, got, err)
			}
		}
	}
}
