package integration

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// TestSocketMark: -o sock_cookie_id=N marks the TCP listeners, the
// connections they accept and the UDP sockets with SO_MARK N, as
// memcached does, so firewall and routing rules can match the server's
// traffic. ss shows a socket's mark as fwmark. Setting a mark needs
// CAP_NET_ADMIN: gocached marks its sockets before -u drops root, while
// memcached, started as root with -u, drops it before it opens them and
// reports "setsockopt: Operation not permitted", so only the engines are
// held to it.
func TestSocketMark(t *testing.T) {
	if os.Geteuid() != 0 {
		missing(t, "SO_MARK needs CAP_NET_ADMIN: run as root")
	}
	ss := requireTool(t, "ss")
	forEachEngine(t, func(t *testing.T, tg target) {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		udpPort := pc.LocalAddr().(*net.UDPAddr).Port
		pc.Close()
		srv := startServer(t, tg, "-o", "sock_cookie_id=77", "-U", strconv.Itoa(udpPort))
		c := dialRaw(t, srv.Addr())
		if got := c.roundTrip("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
			t.Fatalf("version: %q", got)
		}
		_, port, _ := net.SplitHostPort(srv.Addr())
		for _, q := range []struct{ what, args string }{
			{"TCP listener", "-ltneH sport = :" + port},
			{"accepted connection", "-tneH state established sport = :" + port},
			{"UDP socket", "-uaneH sport = :" + strconv.Itoa(udpPort)},
		} {
			out, err := testproc.Command(ss, strings.Fields(q.args)...).CombinedOutput()
			if err != nil {
				t.Fatalf("ss %s: %v\n%s", q.args, err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) == 0 || lines[0] == "" {
				t.Errorf("%s: ss lists no socket", q.what)
				continue
			}
			for _, l := range lines {
				if !strings.Contains(l, "fwmark:0x4d") {
					t.Errorf("%s not marked 77: %s", q.what, l)
				}
			}
		}
	})
}
