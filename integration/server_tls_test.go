package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files readable by a server that dropped privileges.
func writeTestCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	dir, err := os.MkdirTemp("", "gocached-tls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	certFile, keyFile, pool, err = testproc.SelfSignedCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pool
}

// TestTLS: with -Z and memcached's ssl_* options, a Go TLS client, openssl
// s_client and pymemcache with an SSL context round-trip; a client that
// speaks plain text to the TLS port is counted in ssl_handshake_errors;
// `stats settings` describes the setup. Debian's memcached (built with TLS)
// is the reference.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := writeTestCert(t)
	targets := []target{{name: "go", engine: "go"}, referenceTarget}
	runTargets(t, targets, func(t *testing.T, tg target) {
		srv := startServer(t, tg, "-Z", "-o", "ssl_chain_cert="+certFile+",ssl_key="+keyFile)
		addr := "127.0.0.1:" + strconv.Itoa(srv.Port())
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		c.Write([]byte("set k 0 0 3\r\ntls\r\nget k\r\n"))
		for _, want := range []string{"STORED\r\n", "VALUE k 0 3\r\n", "tls\r\n", "END\r\n"} {
			if l, err := r.ReadString('\n'); l != want {
				t.Fatalf("over TLS: %q, %v; want %q", l, err, want)
			}
		}

		if path, err := exec.LookPath("openssl"); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			cmd := testproc.CommandContext(ctx, path, "s_client", "-quiet", "-CAfile", certFile, "-connect", addr)
			cmd.Stdin = strings.NewReader("get k\r\nquit\r\n")
			out, _ := cmd.Output()
			cancel()
			if !strings.Contains(string(out), "VALUE k 0 3\r\ntls\r\nEND\r\n") {
				t.Errorf("openssl s_client got %q", out)
			}
		} else {
			missing(t, "openssl not installed (Debian package: openssl)")
		}

		py := pythonWithPymemcache(t)
		script := `import ssl, sys
from pymemcache.client.base import Client
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = Client(("127.0.0.1", int(sys.argv[1])), tls_context=ctx, timeout=5)
c.set("p", b"from-python")
assert c.get("p") == b"from-python", c.get("p")
assert c.get("k") == b"tls"
print("ok")
`
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := testproc.CommandContext(ctx, py, "-c", script, strconv.Itoa(srv.Port()), certFile).CombinedOutput()
		cancel()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("pymemcache over TLS: %v\n%s", err, out)
		}

		plain, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		plain.SetDeadline(time.Now().Add(10 * time.Second))
		plain.Write([]byte("get k\r\n"))
		buf := make([]byte, 512)
		if n, err := plain.Read(buf); err == nil && strings.HasPrefix(string(buf[:n]), "VALUE") {
			t.Errorf("plain client on the TLS port was answered: %q", buf[:n])
		}
		plain.Close()
		// A client that cannot negotiate (TLS 1.1 against memcached's
		// tlsv1.2 minimum) is what ssl_handshake_errors counts.
		if old, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}); err == nil {
			old.Close()
			t.Fatal("a TLS 1.1 client negotiated")
		}
		stats := func(group string) map[string]string {
			c.Write([]byte(strings.TrimSpace("stats "+group) + "\r\n"))
			m := map[string]string{}
			for {
				l, err := r.ReadString('\n')
				if err != nil || l == "END\r\n" {
					return m
				}
				if f := strings.Fields(l); len(f) == 3 {
					m[f[1]] = f[2]
				}
			}
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		deadline := time.Now().Add(30 * time.Second)
		// memcached counts a failed negotiation zero to several times
		// (per failed read of it, racing the client's close): it only has
		// to report the stat; gocached counts each failed negotiation.
		if tg.isReference() {
			if _, ok := stats("")["ssl_handshake_errors"]; !ok {
				t.Errorf("memcached -Z shows no ssl_handshake_errors")
			}
		}
		for got := stats("")["ssl_handshake_errors"]; !tg.isReference() && (got == "" || got == "0"); got = stats("")["ssl_handshake_errors"] {
			if time.Now().After(deadline) {
				t.Fatalf("ssl_handshake_errors = %q after a failed TLS 1.1 negotiation, want at least 1", got)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Write([]byte("refresh_certs\r\n"))
		if l, err := r.ReadString('\n'); l != "OK\r\n" {
			t.Errorf("refresh_certs: %q, %v", l, err)
		}
		set := stats("settings")
		for name, want := range map[string]string{"ssl_enabled": "yes", "ssl_chain_cert": certFile, "ssl_key": keyFile,
			"ssl_verify_mode": "0", "ssl_min_version": "tlsv1.2", "ssl_session_cache": "no"} {
			if set[name] != want {
				t.Errorf("stats settings %s = %q, want %q", name, set[name], want)
			}
		}
	})
}
