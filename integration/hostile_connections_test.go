package integration

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConnLimit: with -c N, N clients are served and the next one gets
// memcached's "ERROR Too many open connections" and is closed. memcached
// counts its own listening and reserved fds against -c, so only gocached's
// engines are held to the exact number.
func TestConnLimit(t *testing.T) {
	const limit = 8
	forEachEngine(t, func(t *testing.T, tg target) {
		t.Parallel()
		srv := startServer(t, tg, "-c", strconv.Itoa(limit))
		conns := fillConns(t, srv.Addr(), limit)
		over := dialRaw(t, srv.Addr())
		over.expectClosed("ERROR Too many open connections\r\n")

		// Freeing a slot lets a new client in (the close is noticed asynchronously).
		conns[0].conn.Close()
		deadline := time.Now().Add(5 * time.Second)
		for {
			c := dialRaw(t, srv.Addr())
			c.send("version\r\n")
			got, _ := c.readUntil("\r\n", 5*time.Second)
			if strings.HasPrefix(got, "VERSION ") {
				break
			}
			c.conn.Close()
			if got != "ERROR Too many open connections\r\n" || time.Now().After(deadline) {
				t.Fatalf("after freeing a slot: %q", got)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for i, c := range conns[1:] {
			if got := c.roundTrip("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
				t.Fatalf("connection %d after the rejection: %q", i+2, got)
			}
		}
	})
}

// fillConns opens n clients to addr, each served (a version round trip).
func fillConns(t *testing.T, addr string, n int) []*rawConn {
	t.Helper()
	var conns []*rawConn
	for i := range n {
		c := dialRaw(t, addr)
		if got := c.roundTrip("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
			t.Fatalf("connection %d of %d: %q, want VERSION", i+1, n, got)
		}
		conns = append(conns, c)
	}
	return conns
}

// openFDs counts the file descriptors pid has open.
func openFDs(t testing.TB, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		missing(t, "cannot read /proc/%d/fd: %v", pid, err)
	}
	return len(ents)
}

// TestFDLeak: 10k connect/close cycles, some closing mid-request, leave the
// server's fd count where it was.
func TestFDLeak(t *testing.T) {
	const cycles, slack = 10000, 3
	forEachTarget(t, func(t *testing.T, tg target) {
		srv := startServer(t, tg)
		warm := dialRaw(t, srv.Addr())
		warm.roundTrip("version\r\n")
		before := openFDs(t, srv.Pid())
		for i := range cycles {
			c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
			if err != nil {
				t.Fatalf("cycle %d: %v", i, err)
			}
			switch i % 4 {
			case 1: // a request, unread reply
				c.Write([]byte("version\r\n"))
			case 2: // half a request
				c.Write([]byte("set k 0 0 10\r\nabc"))
			case 3: // abortive close (RST)
				c.(*net.TCPConn).SetLinger(0)
			}
			c.Close()
		}
		warm.roundTrip("version\r\n") // the server is alive and has caught up on this one
		// The server notices each close when it gets to it: wait until
		// the count is back, generously (a loaded machine, -race).
		deadline := time.Now().Add(30 * time.Second)
		after := openFDs(t, srv.Pid())
		for after > before+slack && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			after = openFDs(t, srv.Pid())
		}
		t.Logf("fds: %d before, %d after %d cycles", before, after, cycles)
		if after > before+slack {
			t.Fatalf("fd count grew from %d to %d over %d connect/close cycles", before, after, cycles)
		}
	})
}

// TestBinaryFirstByte: a binary-protocol request (first byte 0x80) gets a
// prompt binary reply or a close, never a hang.
func TestBinaryFirstByte(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		srv := startServer(t, tg)
		c := dialRaw(t, srv.Addr())
		// A 24-byte binary header: magic 0x80, opcode 0x0b (version), rest zero.
		hdr := make([]byte, 24)
		hdr[0], hdr[1] = 0x80, 0x0b
		c.send(string(hdr))
		c.conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 1)
		n, err := c.r.Read(buf)
		switch {
		case n == 1 && buf[0] == 0x81: // a binary response
		case n == 0 && err != nil && !isTimeout(err): // closed
		default:
			t.Fatalf("binary request: read %d bytes %x, err %v; want a 0x81 response or a close within 3 s", n, buf[:n], err)
		}
	})
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
