package integration

import (
	"bytes"
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestUDP sends memcached's framed UDP requests to every engine and to
// Debian's memcached (-U) and checks the replies: the request ID echoed,
// replies over 1400 bytes cut into numbered datagrams that reassemble to
// the TCP reply.
func TestUDP(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		c := startUDPServer(t, tg)
		big := strings.Repeat("y", 4000)
		for i, tc := range []struct{ req, want string }{
			{"set k 3 0 5\r\nhello\r\n", "STORED\r\n"},
			{"get k\r\n", "VALUE k 3 5\r\nhello\r\nEND\r\n"},
			{"incr k 1\r\n", "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"},
			{"set big 0 0 4000\r\n" + big + "\r\n", "STORED\r\n"},
			{"get big\r\n", "VALUE big 0 4000\r\n" + big + "\r\nEND\r\n"},
		} {
			id := uint16(100 + i)
			got := udpRoundTrip(t, c, id, tc.req)
			if got != tc.want {
				t.Errorf("%q: got %q, want %q", tc.req[:min(len(tc.req), 20)], got[:min(len(got), 60)], tc.want[:min(len(tc.want), 60)])
			}
		}
	})
}

// startUDPServer starts tg with flags and UDP on a free loopback port, and
// returns a UDP socket connected to it, closed at cleanup.
func startUDPServer(t *testing.T, tg target, flags ...string) net.Conn {
	t.Helper()
	port := freeUDPPort(t)
	startServer(t, tg, append(flags, "-U", strconv.Itoa(port))...)
	c, err := net.Dial("udp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	waitUDPBound(t, port)
	return c
}

// freeUDPPort is a loopback UDP port nobody holds now, for -U.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	port, err := testproc.FreeUDPPort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// waitUDPBound waits until the server's UDP socket is bound: the readiness
// probe checks TCP, and the UDP sockets are bound after the TCP listeners.
// It looks at the socket table rather than sending a probe, which the
// servers would count in their stats.
func waitUDPBound(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ok, err := testproc.UDPBound(port)
		if err != nil {
			missing(t, "cannot read the UDP socket table: %v", err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing bound UDP port %d 30 s after the server started", port)
		}
	}
}

// udpRoundTrip sends one framed request and reassembles the reply by
// sequence number.
func udpRoundTrip(t *testing.T, c net.Conn, id uint16, req string) string {
	t.Helper()
	pkt := make([]byte, 8, 8+len(req))
	binary.BigEndian.PutUint16(pkt[0:], id)
	binary.BigEndian.PutUint16(pkt[4:], 1)
	pkt = append(pkt, req...)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(pkt); err != nil {
		t.Fatal(err)
	}
	var parts map[uint16][]byte
	total := -1
	buf := make([]byte, 2048)
	for total < 0 || len(parts) < total {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("request %d: %v after %d of %d datagrams", id, err, len(parts), total)
		}
		d := buf[:n]
		if n < 8 || n > 1400 || binary.BigEndian.Uint16(d[0:]) != id {
			t.Fatalf("request %d: bad datagram (%d bytes) %x", id, n, d[:min(n, 8)])
		}
		if parts == nil {
			parts = make(map[uint16][]byte)
			total = int(binary.BigEndian.Uint16(d[4:]))
		}
		parts[binary.BigEndian.Uint16(d[2:])] = bytes.Clone(d[8:])
	}
	var out []byte
	for i := range total {
		out = append(out, parts[uint16(i)]...)
	}
	return string(out)
}

// TestUDPIgnoresBinding: memcached reads each UDP datagram as text or
// binary by its first byte whatever -B says, and so must gocached: a
// binary version request under -B ascii, a text one under -B binary.
func TestUDPIgnoresBinding(t *testing.T) {
	binVersion := string([]byte{0x80, 0x0b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0})
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, tc := range []struct{ binding, req string }{
			{"ascii", binVersion},
			{"binary", "version\r\n"},
		} {
			c := startUDPServer(t, tg, "-B", tc.binding)
			got := udpRoundTrip(t, c, 7, tc.req)
			ok := strings.HasPrefix(got, "VERSION ")
			if tc.binding == "ascii" {
				ok = len(got) > 24 && got[0] == 0x81 && got[1] == 0x0b && got[15] == 7
			}
			if !ok {
				t.Errorf("-B %s: version request over UDP answered %q", tc.binding, got)
			}
		}
	})
}

// TestUDPTraffic: UDP datagrams count in bytes_read (when longer than the
// 8-byte header) and bytes_written, header included, as in memcached, and
// stats reset clears them.
func TestUDPTraffic(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		c := startUDPServer(t, tg, "-t", "1")
		traffic := func(id uint16) string {
			var got []string
			names, vals := testproc.ParseStats(udpRoundTrip(t, c, id, "stats\r\n"))
			for _, n := range names {
				if n == "bytes_read" || n == "bytes_written" {
					got = append(got, n+" "+vals[n])
				}
			}
			return strings.Join(got, ", ")
		}
		if got := udpRoundTrip(t, c, 1, "set a 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
			t.Fatalf("set: %q", got)
		}
		// 24 + 15 read (the stats request counts before its reply is
		// made), 16 written.
		if got, want := traffic(2), "bytes_read 39, bytes_written 16"; got != want {
			t.Errorf("after a set: %s, want %s", got, want)
		}
		if got := udpRoundTrip(t, c, 3, "stats reset\r\n"); got != "RESET\r\n" {
			t.Fatalf("stats reset: %q", got)
		}
		if got, want := traffic(4), "bytes_read 15, bytes_written 15"; got != want {
			t.Errorf("after stats reset: %s, want %s", got, want)
		}
	})
}

// TestUDPConnCounts checks that UDP sockets count as connections the way
// memcached counts them: one per worker thread on each socket, in
// curr_connections and connection_structures, and in total_connections
// until `stats reset`.
func TestUDPConnCounts(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		c := startUDPServer(t, tg, "-t", "3")
		counts := func(id uint16) map[string]string {
			_, got := testproc.ParseStats(udpRoundTrip(t, c, id, "stats\r\n"))
			return got
		}
		// One TCP listener and 3 UDP connections; curr is memcached's
		// count minus one, as for TCP. The harness's readiness probe adds
		// a structure and a total if the server accepted it before it was
		// closed, and its close may still be on its way to the server:
		// wait for that, a bounded time. memcached counts the probe's
		// structure on accept and its total in the worker that takes it,
		// so the two may briefly differ: wait for them to agree too.
		before := counts(1)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && (before["curr_connections"] != "3" || before["total_connections"] != before["connection_structures"]); {
			time.Sleep(50 * time.Millisecond)
			before = counts(1)
		}
		oneOf := func(when, name, got string, want ...string) {
			t.Helper()
			for _, w := range want {
				if got == w {
					return
				}
			}
			t.Errorf("%s: %s %s, want one of %v", when, name, got, want)
		}
		structs := before["connection_structures"]
		oneOf("at start", "connection_structures", structs, "4", "5")
		oneOf("at start", "curr_connections", before["curr_connections"], "3")
		oneOf("at start", "total_connections", before["total_connections"], structs)
		// memcached lists each per-thread UDP descriptor in stats conns.
		udpLines := strings.Count(udpRoundTrip(t, c, 4, "stats conns\r\n"), ":UDP UDP\r\n")
		if udpLines != 3 {
			t.Errorf("stats conns lists %d UDP connections, want 3", udpLines)
		}
		if got := udpRoundTrip(t, c, 2, "stats reset\r\n"); got != "RESET\r\n" {
			t.Fatalf("stats reset: %q", got)
		}
		after := counts(3)
		// memcached under load was seen to count the probe a second time
		// here (curr_connections 4) for a moment: wait, bounded, as above.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && after["curr_connections"] != "3"; {
			time.Sleep(50 * time.Millisecond)
			after = counts(3)
		}
		oneOf("after stats reset", "curr_connections", after["curr_connections"], "3")
		oneOf("after stats reset", "connection_structures", after["connection_structures"], "4", "5")
		// The UDP connections leave the total; a probe accepted late
		// may have come in since.
		oneOf("after stats reset", "total_connections", after["total_connections"], "0", "1")
	})
}
