package integration

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestListenFailuresMatchMemcached starts memcached and every engine where
// a listener cannot be set up: a TCP or UDP port another socket holds, a
// list of -l entries one of which is held, an address not on this host, a
// -s path in a missing directory. memcached exits 71 with "failed to
// listen on ..."; gocached must too, with that line first. Where
// memcached's reason is its stale errno (it prints "Invalid argument"
// after bind() failed with another), only the status and the text before
// the reason are compared.
func TestListenFailuresMatchMemcached(t *testing.T) {
	mc := referenceMemcached(t)
	gc := gocachedBinary(t)
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	held := tcp.Addr().(*net.TCPAddr).Port
	heldUDP := udp.LocalAddr().(*net.UDPAddr).Port
	missingDir := filepath.Join(t.TempDir(), "no", "such", "dir", "sock")
	cases := []struct {
		name     string
		args     string
		byPrefix bool
		whole    bool // gocached's first lines are all of memcached's
	}{
		{"tcp port held", fmt.Sprintf("-p %d -l 127.0.0.1", held), false, false},
		{"one of the -l list held", fmt.Sprintf("-p %d -l 127.0.0.1:%d,127.0.0.1", held+1, held), false, false},
		{"udp port held", fmt.Sprintf("-p 0 -U %d -l 127.0.0.1", heldUDP), false, false},
		{"address not here", fmt.Sprintf("-p %d -l 192.0.2.1", held+2), true, false},
		{"unix socket dir missing", "-s " + missingDir, true, false},
		{"notls without -Z", fmt.Sprintf("-p %d -l notls:127.0.0.1", held+3), false, true},
		{"btls without -Z", fmt.Sprintf("-p %d -l btls:127.0.0.1", held+3), false, true},
		{"mtls without -Z", fmt.Sprintf("-p %d -l 127.0.0.1:%d,mtlsX127.0.0.1", held+3, held+4), false, true},
		{"proto[proxy] without the proxy", fmt.Sprintf("-p %d -l proto[proxy]:127.0.0.1", held+3), false, true},
		{"proto[ unterminated", fmt.Sprintf("-p %d -l proto[ascii:127.0.0.1", held+3), false, true},
		{"tag too long", fmt.Sprintf("-p %d -l 127.0.0.1:%d,tag[abcdefghi]:127.0.0.1", held+3, held+4), false, true},
		{"tag[ unterminated", fmt.Sprintf("-p %d -l tag[x:127.0.0.1", held+3), false, true},
	}
	base := []string{}
	if os.Geteuid() == 0 {
		base = append(base, "-u", "nobody")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(strings.Fields(c.args), base...)
			mStatus, mErr := runCLI(t, mc, args)
			if mStatus != 71 {
				t.Fatalf("memcached %q: status %d, stderr %q: not its listen failure", args, mStatus, mErr)
			}
			for _, tg := range engineTargets {
				gStatus, gErr := runCLI(t, gc, append([]string{"--engine=" + tg.engine}, args...))
				// gocached's first line is memcached's; its own log line,
				// naming the address and port, follows.
				gLine, _, _ := strings.Cut(gErr, "\n")
				want, got := lastLine(mErr), gLine
				if c.whole {
					want, got = mErr, gErr[:min(len(gErr), len(mErr))]
				}
				if c.byPrefix {
					want, got = withoutReason(want), withoutReason(got)
				}
				if gStatus != mStatus || got != want {
					t.Errorf("%s %q:\nmemcached: status %d, stderr %q\ngocached:  status %d, stderr %q", tg.name, args, mStatus, mErr, gStatus, gErr)
				}
			}
		})
	}
}

// lastLine is s's last line (memcached may print perror's line before it).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// withoutReason is line up to its last ": ", the reason memcached appends.
func withoutReason(line string) string {
	if i := strings.LastIndex(line, ": "); i >= 0 {
		return line[:i]
	}
	return line
}

// TestWildcardServesIPv6WhenIPv4PortTaken: with no -l, memcached binds the
// wildcard as an IPv4 and an IPv6-only socket and skips the one whose port
// another program holds (EADDRINUSE), so it starts and serves IPv6 alone,
// TCP and UDP. Every engine must start and serve the same.
func TestWildcardServesIPv6WhenIPv4PortTaken(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		tcp, err := net.Listen("tcp4", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
		defer tcp.Close()
		udp, err := net.ListenPacket("udp4", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
		defer udp.Close()
		port := tcp.Addr().(*net.TCPAddr).Port
		udpPort := udp.LocalAddr().(*net.UDPAddr).Port
		if probe, err := net.Listen("tcp6", net.JoinHostPort("::1", strconv.Itoa(port))); err != nil {
			missing(t, "no IPv6 loopback to serve on: %v", err)
		} else {
			probe.Close()
		}
		sp := spec(t, tg, "-p", strconv.Itoa(port), "-U", strconv.Itoa(udpPort))
		sp.Addr = net.JoinHostPort("::1", strconv.Itoa(port))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := testproc.Start(ctx, sp)
		if err != nil {
			t.Fatalf("%s did not start with IPv4's port held: %v", tg.name, err)
		}
		defer p.Stop(0)

		c, err := net.DialTimeout("tcp6", sp.Addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("version\r\n")); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "VERSION ") {
			t.Errorf("TCP over IPv6: %q, %v", line, err)
		}

		u, err := net.Dial("udp6", net.JoinHostPort("::1", strconv.Itoa(udpPort)))
		if err != nil {
			t.Fatal(err)
		}
		defer u.Close()
		u.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := u.Write(append([]byte{0, 7, 0, 0, 0, 1, 0, 0}, "version\r\n"...)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 512)
		n, err := u.Read(buf)
		if err != nil || n < 8 || !strings.HasPrefix(string(buf[8:n]), "VERSION ") {
			t.Errorf("UDP over IPv6: %q, %v", buf[:max(n, 0)], err)
		}
	})
}

// TestAuthFileFailuresMatchMemcached: an -Y file memcached cannot use
// fails the start with its line first and status 1: missing, malformed,
// or not readable by the -u user (memcached reads it after dropping root;
// so does gocached, with the user's rights). An unknown -u user, as root,
// is memcached's 67 with its line first.
func TestAuthFileFailuresMatchMemcached(t *testing.T) {
	mc := referenceMemcached(t)
	gc := gocachedBinary(t)
	dir := t.TempDir()
	malformed := filepath.Join(dir, "malformed")
	if err := os.WriteFile(malformed, []byte("user:pass\nnocolon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"missing": filepath.Join(dir, "missing"), "malformed": malformed}
	if os.Geteuid() == 0 {
		private := filepath.Join(userDir(t), "private")
		if err := os.WriteFile(private, []byte("user:pass\n"), 0o600); err != nil { // root's
			t.Fatal(err)
		}
		cases["unreadable by the user"] = private
		cases["unknown -u user"] = "no-such-user-here" // memcached's 67, its line first
	}
	for name, file := range cases {
		t.Run(name, func(t *testing.T) {
			args := []string{"-p", "0", "-U", "0", "-Y", file, "-u", "nobody"}
			if name == "unknown -u user" {
				args = []string{"-p", "0", "-U", "0", "-u", file}
			}
			mStatus, mErr := runCLI(t, mc, args)
			if mStatus != 1 && mStatus != 67 {
				t.Fatalf("memcached: status %d, stderr %q", mStatus, mErr)
			}
			want, _, _ := strings.Cut(mErr, "\n")
			for _, tg := range engineTargets {
				status, stderr := runCLI(t, gc, append([]string{"--engine=" + tg.engine}, args...))
				if got, _, _ := strings.Cut(stderr, "\n"); status != mStatus || got != want {
					t.Errorf("%s: status %d, first line %q; memcached: %d, %q", tg.name, status, got, mStatus, want)
				}
			}
		})
	}
}
