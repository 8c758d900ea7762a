package reactor_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/store"
)

func udpSessions(t *testing.T) func() reactor.Session {
	st, err := store.New(store.Config{MemoryLimit: 8 << 20, MaxItemSize: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	env := &protocol.Env{Store: st, Settings: &protocol.Settings{Version: "1.6.18-gocached", MaxConns: 10,
		MaxBytes: 8 << 20, ItemSizeMax: 2 << 20, Evictions: true, CASEnabled: true, ReqsPerEvent: 20,
		Verbosity: new(atomic.Int32)}, ResumesPending: true}
	return func() reactor.Session { return protocol.NewSession(env) }
}

func frame(id, seq, total, reserved uint16, payload string) []byte {
	b := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint16(b[0:], id)
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint16(b[4:], total)
	binary.BigEndian.PutUint16(b[6:], reserved)
	return append(b, payload...)
}

// TestUDPFrames checks memcached's framing rules, as Debian's memcached
// 1.6.18 answers them.
func TestUDPFrames(t *testing.T) {
	sess := udpSessions(t)()
	var scratch []byte
	run := func(pkt []byte) [][]byte {
		t.Helper()
		frames, s, err := reactor.UDPFrames(sess, pkt, scratch)
		if err != nil {
			t.Fatal(err)
		}
		scratch = s
		out := make([][]byte, len(frames))
		for i, f := range frames {
			out[i] = bytes.Clone(f)
		}
		return out
	}
	if f := run([]byte("abc")); len(f) != 0 {
		t.Errorf("short datagram answered: %q", f)
	}
	if f := run(frame(1, 0, 2, 0, "get k\r\n")); len(f) != 0 {
		t.Errorf("multi-datagram request answered: %q", f)
	}
	f := run(frame(7, 0, 1, 0, "set k 0 0 3\r\nabc\r\n"))
	if len(f) != 1 || !bytes.Equal(f[0], frame(7, 0, 1, 0, "STORED\r\n")) {
		t.Errorf("set: %q", f)
	}
	f = run(frame(9, 0, 1, 5, "get k\r\n")) // reserved bytes are not checked
	if len(f) != 1 || !bytes.Equal(f[0], frame(9, 0, 1, 0, "VALUE k 0 3\r\nabc\r\nEND\r\n")) {
		t.Errorf("get: %q", f)
	}
	big := strings.Repeat("x", 5000)
	run(frame(1, 0, 1, 0, "set big 0 0 5000\r\n"+big+"\r\n"))
	f = run(frame(0xbeef, 0, 1, 0, "get big\r\n"))
	want := "VALUE big 0 5000\r\n" + big + "\r\nEND\r\n"
	var joined []byte
	for i, d := range f {
		if len(d) > 1400 || (i < len(f)-1 && len(d) != 1400) {
			t.Errorf("datagram %d is %d bytes; want 1400 but for the last", i, len(d))
		}
		h := d[:8]
		if binary.BigEndian.Uint16(h[0:]) != 0xbeef || binary.BigEndian.Uint16(h[2:]) != uint16(i) ||
			binary.BigEndian.Uint16(h[4:]) != uint16(len(f)) || binary.BigEndian.Uint16(h[6:]) != 0 {
			t.Errorf("datagram %d header %x", i, h)
		}
		joined = append(joined, d[8:]...)
	}
	if len(f) != 4 || string(joined) != want {
		t.Errorf("large reply: %d datagrams, payload %d bytes; want 4 and %d", len(f), len(joined), len(want))
	}

	// A value the Session sends in pieces (Pending after its line is
	// consumed) still goes out whole: a datagram reply cannot wait.
	huge := strings.Repeat("0123456789", 150000) // beyond one call's output budget
	if _, _, st := sess.Process([]byte("set huge 0 0 1500000\r\n"+huge+"\r\n"), nil); st != protocol.NeedMore {
		t.Fatalf("set huge: status %v", st)
	}
	for _, req := range []string{"get huge\r\n", "mg huge v\r\n"} {
		f = run(frame(3, 0, 1, 0, req))
		joined = joined[:0]
		for _, d := range f {
			joined = append(joined, d[8:]...)
		}
		if !strings.Contains(string(joined), "\r\n"+huge+"\r\n") {
			t.Errorf("%q over UDP: %d datagrams, %d payload bytes; want the whole %d-byte value", req, len(f), len(joined), len(huge))
		}
	}
}

// TestUDPServer round-trips requests over a real loopback socket.
func TestUDPServer(t *testing.T) {
	u := serveUDP(t, 1)
	c, err := net.Dial("udp", u.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2048)
	for i, tc := range []struct{ req, want string }{
		{"set a 1 0 2\r\nhi\r\n", "STORED\r\n"},
		{"get a\r\n", "VALUE a 1 2\r\nhi\r\nEND\r\n"},
		{"bogus\r\n", "ERROR\r\n"},
	} {
		if _, err := c.Write(frame(uint16(i), 0, 1, 0, tc.req)); err != nil {
			t.Fatal(err)
		}
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("%q: %v", tc.req, err)
		}
		if !bytes.Equal(buf[:n], frame(uint16(i), 0, 1, 0, tc.want)) {
			t.Errorf("%q: got %q, want %q", tc.req, buf[:n], tc.want)
		}
	}
}

// FuzzUDPFrames: no datagram panics the framing, and every reply datagram
// is within memcached's size with a consistent header.
func FuzzUDPFrames(f *testing.F) {
	f.Add(frame(1, 0, 1, 0, "get k\r\n"))
	f.Add(frame(1, 0, 1, 0, "set k 0 0 1\r\nx\r\nget k k k\r\n"))
	f.Add([]byte("\x00"))
	f.Add(frame(1, 0, 1, 0, "get a b c\r\n"))
	f.Add(frame(1, 0, 1, 0, "quit\r\n"))
	newSession := udpSessionsFuzz(f)
	f.Fuzz(func(t *testing.T, pkt []byte) {
		frames, _, err := reactor.UDPFrames(newSession(), pkt, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Messages back to back: datagrams numbered from 0 with the
		// message's count, or a lone bare header with a count of 0.
		for i, seq, total := 0, 0, 0; i < len(frames); i++ {
			d := frames[i]
			if len(d) < 8 || len(d) > 1400 || !bytes.Equal(d[:2], pkt[:2]) || !bytes.Equal(d[6:8], []byte{0, 0}) {
				t.Fatalf("datagram %d of %d: %x", i, len(frames), d[:min(len(d), 8)])
			}
			if seq == total {
				seq, total = 0, int(binary.BigEndian.Uint16(d[4:]))
			}
			if binary.BigEndian.Uint16(d[2:]) != uint16(seq) || int(binary.BigEndian.Uint16(d[4:])) != total ||
				(total == 0) != (len(d) == 8) || (seq < total-1 && len(d) != 1400) {
				t.Fatalf("datagram %d of %d: %x, %d bytes", i, len(frames), d[:8], len(d))
			}
			seq++
			if total == 0 {
				total = 1
			}
		}
		if len(frames) > 0 && binary.BigEndian.Uint16(frames[len(frames)-1][2:])+1 != max(1, binary.BigEndian.Uint16(frames[len(frames)-1][4:])) {
			t.Fatalf("last message cut short")
		}
	})
}

func udpSessionsFuzz(f *testing.F) func() reactor.Session {
	st, err := store.New(store.Config{MemoryLimit: 1 << 20, MaxItemSize: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(st.Close)
	env := &protocol.Env{Store: st, Settings: &protocol.Settings{Version: "1.6.18-gocached", MaxConns: 10,
		MaxBytes: 1 << 20, ItemSizeMax: 64 << 10, Evictions: true, CASEnabled: true, ReqsPerEvent: 20,
		Verbosity: new(atomic.Int32)}}
	return func() reactor.Session { return protocol.NewSession(env) }
}

// TestUDPServerPerThread: with a descriptor per thread, a socket has that
// many descriptors, the lowest free ones in order as memcached's socket()
// and dup()s take them, each listed and counted as a connection, and all of
// them answer: requests from many clients at once are all served,
// whichever descriptor takes them.
func TestUDPServerPerThread(t *testing.T) {
	const perSocket = 3
	want := lowestFree(t, perSocket)
	u := serveUDP(t, perSocket)
	fds := u.Descriptors()
	if len(fds) != perSocket {
		t.Fatalf("descriptors %v, want %d", fds, perSocket)
	}
	if fmt.Sprint(fds) != fmt.Sprint(want) {
		t.Errorf("descriptors %v, want the lowest free ones %v, as memcached's dups", fds, want)
	}
	if lines := u.ConnLines(time.Now().Unix()); len(lines) != perSocket {
		t.Errorf("stats conns: %d lines, want %d", len(lines), perSocket)
	}
	if open, total := u.ConnCounts(); open != perSocket || total != perSocket {
		t.Errorf("ConnCounts %d, %d; want %d, %d", open, total, perSocket, perSocket)
	}
	if len(u.LocalAddrs()) != 1 {
		t.Errorf("LocalAddrs %v, want the one bound address", u.LocalAddrs())
	}
	u.ResetStats()
	if open, total := u.ConnCounts(); open != perSocket || total != 0 {
		t.Errorf("after ResetStats: ConnCounts %d, %d; want %d, 0", open, total, perSocket)
	}

	const clients, rounds = 8, 20
	errs := make(chan error, clients)
	for cl := range clients {
		go func() {
			c, err := net.Dial("udp", u.Addr().String())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			buf := make([]byte, 2048)
			for r := range rounds {
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Write(frame(uint16(r), 0, 1, 0, fmt.Sprintf("set c%d 0 0 1\r\nx\r\n", cl))); err != nil {
					errs <- err
					return
				}
				n, err := c.Read(buf)
				if err != nil {
					errs <- fmt.Errorf("client %d round %d: %w", cl, r, err)
					return
				}
				if got := string(buf[8:n]); got != "STORED\r\n" {
					errs <- fmt.Errorf("client %d round %d: %q", cl, r, got)
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// lowestFree is the n descriptors the kernel hands out next, lowest first.
// They are consecutive only if nothing above the lowest free one is open,
// and that depends on the process, not on the code under test: a descriptor
// inherited from whoever started the test binary, or a hole an earlier
// test's closed socket left below Go's netpoller, lies among them.
func lowestFree(t *testing.T, n int) []int {
	t.Helper()
	// Go's netpoller takes two descriptors when the first file or socket is
	// registered with it: have that happen now, not in the middle of the
	// probes below or of the server's socket and dups.
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc.Close()
	fds := make([]int, n)
	for i := range fds {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fds[i] = int(f.Fd())
	}
	return fds
}

// serveUDP serves UDP on a loopback port with perSocket descriptors until
// the test ends, and checks that Serve returns after Close.
func serveUDP(t *testing.T, perSocket int) *reactor.UDPServer {
	t.Helper()
	u, err := reactor.ListenUDP("127.0.0.1", 0, perSocket, 0, udpSessions(t))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { u.Serve(); close(done) }()
	t.Cleanup(func() {
		u.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return u
}

// TestUDPReplyBound: the reply to one datagram is gathered whole before it
// is framed, so it is bounded: up to UDPReplyMax it goes out in full (the
// datagrams reassemble to it), past it the datagram gets memcached's
// out-of-memory line instead, in one datagram.
func TestUDPReplyBound(t *testing.T) {
	sess := udpSessions(t)()
	value := strings.Repeat("v", 1<<20)
	if f, _, err := reactor.UDPFrames(sess, frame(1, 0, 1, 0, fmt.Sprintf("set big 0 0 %d\r\n%s\r\n", len(value), value)), nil); err != nil || len(f) != 1 {
		t.Fatalf("set: %d datagrams, %v", len(f), err)
	}
	fits := reactor.UDPReplyMax/(len(value)+64) - 1
	for _, tc := range []struct {
		keys int
		ok   bool
	}{{1, true}, {fits, true}, {fits + 3, false}, {60, false}} {
		req := "get" + strings.Repeat(" big", tc.keys) + "\r\n"
		// A lone multiget is cut per key; a second request makes the reply
		// one message.
		frames, _, err := reactor.UDPFrames(sess, frame(7, 0, 1, 0, req+"mn\r\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		var body []byte
		for _, f := range frames {
			body = append(body, f[8:]...)
		}
		want := strings.Repeat("VALUE big 0 1048576\r\n"+value+"\r\n", tc.keys) + "END\r\nMN\r\n"
		if !tc.ok {
			want = "SERVER_ERROR out of memory writing get response\r\n"
		}
		if string(body) != want {
			t.Errorf("%d keys: a reply of %d bytes in %d datagrams, want %d bytes", tc.keys, len(body), len(frames), len(want))
		}
	}
}
