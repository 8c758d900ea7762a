package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

// memcached 1.6.43 fixed an ASCII authentication bypass (its commit
// "core: enforce ascii auth more when enabled", issue 1283): with -Y, an
// -l entry "proto[binary]:ADDR" opened a listener serving the binary
// protocol, which -Y does not authenticate, and "proto[negotiating]:ADDR"
// one that let a client pick it. Since then memcached refuses to start
// with the first and serves ASCII on the second, with a warning.

// authListenerFile is an -Y file readable by the user memcached drops to.
func authListenerFile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "auth")
	if err := os.WriteFile(file, []byte("user:pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

// TestAuthRefusesBinaryListener: -Y with a "proto[binary]:" listener does
// not start: memcached 1.6.45's line, its listen failure, EX_OSERR.
func TestAuthRefusesBinaryListener(t *testing.T) {
	file := authListenerFile(t)
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// memcached refuses the entry before it binds it (nor any after it).
	listen := fmt.Sprintf("proto[binary]:127.0.0.1:%d,127.0.0.1:%d", port, port)
	args := []string{"-Y", file, "-l", listen, "-p", strconv.Itoa(port), "-U", "0"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
	}
	want := "Cannot use binary protocol when ascii authentication enabled\n" +
		"failed to listen on one of interface(s) " + listen + ": Success\n"
	// gocached logs why after memcached's lines.
	status, stderr := runCLI(t, gocachedBinary(t), args)
	if status != 71 || !strings.HasPrefix(stderr, want) {
		t.Errorf("gocached: status %d, stderr %q; want 71, %q first", status, stderr, want)
	}
	if status, stderr := runCLI(t, referenceMemcached(t), args); status != 71 || stderr != want {
		t.Errorf("memcached: status %d, stderr %q; want 71, %q", status, stderr, want)
	}
}

// TestAuthNegotiatingListenerIsASCII: with -Y, a "proto[negotiating]:"
// listener warns and serves ASCII only: a binary request is no way around
// the login, text commands are refused until it, and served after.
func TestAuthNegotiatingListenerIsASCII(t *testing.T) {
	file := authListenerFile(t)
	forEachTarget(t, func(t *testing.T, tg target) {
		port, err := testproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		sp := spec(t, tg, "-Y", file, "-l", fmt.Sprintf("proto[negotiating]:127.0.0.1:%d", port), "-p", strconv.Itoa(port), "-U", "0")
		sp.Addr = fmt.Sprintf("127.0.0.1:%d", port)
		p := startAt(t, sp)
		if !strings.Contains(p.Output(), "WARNING: negotiating ports are ascii only when ascii authentication enabled\n") {
			t.Errorf("no warning for the negotiating listener; output:\n%s", p.Output())
		}

		// A binary GET of "k" (its header, then the key and "\r\n"): read
		// as text, it is no command but the login's, and fails.
		c := dialRaw(t, p.Addr())
		get := []byte{0x80, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		c.send(string(get) + "k\r\n")
		if l := c.line(); l != "CLIENT_ERROR unauthenticated\r\n" {
			t.Errorf("binary GET on the negotiating listener: %q, want CLIENT_ERROR unauthenticated", l)
		}
		c.expect("get k\r\n", "CLIENT_ERROR unauthenticated\r\n")
		c.expect("set k 0 0 9\r\nuser pass\r\n", "STORED\r\n")
		c.expect("get k\r\n", "END\r\n")
	})
}
