package integration

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMemcaslap runs libmemcached's memcaslap load tester (Debian's
// libmemcached-tools) for 20,000 requests in each of its modes, text over TCP,
// binary and text over UDP, against every engine and memcached. Its keys
// start with control bytes, so this is also the real-client test of keys
// holding them: a server that refused them answers every text request with
// an error memcaslap prints.
func TestMemcaslap(t *testing.T) {
	bin := requireTool(t, "memcaslap")
	forEachTarget(t, func(t *testing.T, tg target) {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		udpPort := pc.LocalAddr().(*net.UDPAddr).Port
		pc.Close()
		srv := startServer(t, tg, "-U", strconv.Itoa(udpPort))
		for _, mode := range []struct {
			name string
			addr string
			args []string
		}{
			{"text", srv.Addr(), nil},
			{"binary", srv.Addr(), []string{"-B"}},
			{"udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(udpPort)), []string{"-U"}},
		} {
			t.Run(mode.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				args := append([]string{"-s", mode.addr, "-x", "20000", "-c", "4"}, mode.args...)
				out, err := testproc.CommandContext(ctx, bin, args...).CombinedOutput()
				if err != nil {
					t.Fatalf("memcaslap %s: %v\n%s", strings.Join(args, " "), err, abbreviate(string(out)))
				}
				checkMemcaslap(t, string(out))
			})
		}
	})
}

var memcaslapCounter = regexp.MustCompile(`(?m)^(cmd_get|cmd_set|get_misses): (\d+)$`)

// checkMemcaslap fails on any error line memcaslap printed and wants gets
// and sets done with no misses (every key it reads, it wrote before).
func checkMemcaslap(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "ERROR") || strings.Contains(strings.ToLower(line), "error:") {
			t.Fatalf("memcaslap reported %q\n%s", line, abbreviate(out))
		}
	}
	got := map[string]int{}
	for _, m := range memcaslapCounter.FindAllStringSubmatch(out, -1) {
		got[m[1]], _ = strconv.Atoi(m[2])
	}
	if got["cmd_get"] == 0 || got["cmd_set"] == 0 || got["get_misses"] != 0 {
		t.Fatalf("memcaslap: cmd_get %d, cmd_set %d, get_misses %d: want gets and sets, no misses\n%s",
			got["cmd_get"], got["cmd_set"], got["get_misses"], abbreviate(out))
	}
}
