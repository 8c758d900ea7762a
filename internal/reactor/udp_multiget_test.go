package reactor

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// TestMultigetCuts: where a lone multiget's reply is cut, and the replies
// it leaves whole (one message) because they are no VALUE blocks in key
// order then END.
func TestMultigetCuts(t *testing.T) {
	const a, b = "VALUE a 0 1\r\nx\r\n", "VALUE b 3 2 9\r\nyy\r\n"
	for _, tc := range []struct {
		line, reply string
		want        []int // nil: not cut
	}{
		{"get a b", a + b + "END\r\n", []int{len(a), len(a + b + "END\r\n")}},
		{"gets z b", b + "END\r\n", []int{0, len(b + "END\r\n")}},
		{"gat 10 a z z", a + "END\r\n", []int{len(a), len(a + "END\r\n")}},
		{"gats 10 z z a", a + "END\r\n", []int{0, len(a + "END\r\n")}},
		{"get z y\r", "END\r\n", []int{0, 5}},
		{"get  a\x00 b", "END\r\n", []int{0, 5}}, // the NUL is a key byte: two keys, both missed
		{"get a", a + "END\r\n", nil},
		{"gat 10 a", a + "END\r\n", nil},
		{"gat", "ERROR\r\n", nil},
		{"mg a v", "VA 1\r\nx\r\n", nil},
		{"get a b", "CLIENT_ERROR bad command line format\r\n", nil},
		{"get a b", a + b + "END\r\nEND\r\n", nil},      // more than END
		{"get a b", b + a + "END\r\n", nil},             // out of order: not cut
		{"get a b", "VALUE a 0 5\r\nx\r\nEND\r\n", nil}, // a short data block
		{"get a b", "VALUE a 0 x\r\nx\r\nEND\r\n", nil}, // a bad length
		{"get ab b", a + "END\r\n", nil},                // another key's block
	} {
		got := multigetCuts([]byte(tc.line), []byte(tc.reply))
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q / %q: cuts %v, want %v", tc.line, tc.reply, got, tc.want)
		}
	}
}

// TestUDPEmptyReply: which empty replies still go out as a bare header.
func TestUDPEmptyReply(t *testing.T) {
	for _, tc := range []struct {
		used string
		st   protocol.Status
		want bool
	}{
		{"quit\r\n", protocol.Close, true},
		{"set a 0 0 1 noreply\r\nx\r\nquit\n", protocol.Close, true},
		{" quit x\r\n", protocol.Close, true},
		{"quitx\r\n", protocol.Close, false},
		{"set a 0 0 1 noreply\r\nx\r\n", protocol.NeedMore, false},
		{"GET / HTTP/1.1\r\n", protocol.Close, false},
		{"\x80\x11rest of a setq", protocol.NeedMore, true},
		{"", protocol.NeedMore, false},
	} {
		if got := udpMessages([]byte(tc.used), tc.st, nil) != nil; got != tc.want {
			t.Errorf("%q (%v): bare header %v, want %v", tc.used, tc.st, got, tc.want)
		}
	}
}

// TestUDPConnLines: stats conns shows an idle UDP socket with its own
// address, and the one handling a request with the client's address, its
// own as listen_addr and conn_parse_cmd, as memcached shows its UDP conns.
func TestUDPConnLines(t *testing.T) {
	u, err := ListenUDP("127.0.0.1", 0, 1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	now := time.Now().Unix()
	u.state[0].lastCmd.Store(now - 7)
	fd, self := u.Descriptors()[0], "udp:"+u.Addr().String()
	render := func() string {
		var b strings.Builder
		WriteConns(nil, u.ConnLines, now, func(name, value string) { fmt.Fprintf(&b, "%s %s\n", name, value) })
		return b.String()
	}
	want := fmt.Sprintf("%[1]d:UDP UDP\n%[1]d:addr %[2]s\n%[1]d:state conn_read\n%[1]d:secs_since_last_cmd 7\n", fd, self)
	if got := render(); got != want {
		t.Errorf("idle:\n%s\nwant\n%s", got, want)
	}
	peer := netip.MustParseAddrPort("127.0.0.1:5555")
	u.state[0].peer.Store(&peer)
	want = fmt.Sprintf("%[1]d:UDP UDP\n%[1]d:addr udp:127.0.0.1:5555\n%[1]d:listen_addr %[2]s\n%[1]d:state conn_parse_cmd\n%[1]d:secs_since_last_cmd 7\n", fd, self)
	if got := render(); got != want {
		t.Errorf("handling a request:\n%s\nwant\n%s", got, want)
	}
	if got := udpPeerString(netip.MustParseAddrPort("[::1]:5")); got != "udp6:[::1]:5" {
		t.Errorf("IPv6 peer: %s", got)
	}
}
