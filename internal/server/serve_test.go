package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/config"
)

// The tests here run Serve in the test process: its steps, their exit
// statuses and memcached's lines, without building the binary
// (cmd/gocached's tests run the process itself).

// serveArgs parses args and runs Serve on them, returning its status and
// what it wrote to stderr.
func serveArgs(t *testing.T, args ...string) (int, string) {
	t.Helper()
	o, err := config.Parse(args)
	if err != nil {
		t.Fatalf("config.Parse(%q): %v", args, err)
	}
	var stderr syncWriter
	status := Serve(o, Build{Version: "1.6.18-test"}, slog.New(slog.NewTextHandler(&stderr, nil)), &stderr)
	return status, stderr.String()
}

// TestTLSLoadFailureAsMemcached: a certificate, key or CA file -Z cannot
// use exits 64 (memcached's EX_USAGE from ssl_init) with memcached's line
// first: "Error loading the certificate chain: FILE : reason", before
// anything listens.
func TestTLSLoadFailureAsMemcached(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tt := range []struct{ opts, want string }{
		{"ssl_chain_cert=" + missing, "Error loading the certificate chain: " + missing + " : No such file or directory\n"},
		{"ssl_chain_cert=" + junk, "Error loading the certificate chain: " + junk + " : "},
	} {
		status, stderr := serveArgs(t, "-p", "-1", "-l", "127.0.0.1", "-Z", "-o", tt.opts)
		if status != 64 || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("-Z -o %s: Serve = %d, stderr %q; want 64 and %q first", tt.opts, status, stderr, tt.want)
		}
	}
}

// TestServeListenFailure: a port another socket holds exits 71
// (EX_OSERR) with memcached's line first.
func TestServeListenFailure(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	status, stderr := serveArgs(t, "--engine=go", "-l", "127.0.0.1", "-p", fmt.Sprint(port))
	want := "failed to listen on one of interface(s) 127.0.0.1: Address already in use\n"
	if status != 71 || !strings.HasPrefix(stderr, want) {
		t.Errorf("Serve = %d, stderr %q; want 71 and %q first", status, stderr, want)
	}
}

// TestServeUnknownUser: as root, -u with a user that does not exist exits
// 67 (EX_NOUSER) with memcached's line first, once the listeners it bound
// are closed again.
func TestServeUnknownUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("-u is only read when running as root")
	}
	const user = "gocached-no-such-user"
	status, stderr := serveArgs(t, "--engine=go", "-l", "127.0.0.1", "-p", "-1", "-u", user)
	want := "can't find the user " + user + " to switch to\n"
	if status != 67 || !strings.HasPrefix(stderr, want) {
		t.Errorf("Serve = %d, stderr %q; want 67 and %q first", status, stderr, want)
	}
}

// TestServeUntilShutdown: a started server serves, writes memcached's port
// file, and on `shutdown` (-A) stops through the signal path with status 0.
func TestServeUntilShutdown(t *testing.T) {
	portFile := filepath.Join(t.TempDir(), "ports")
	t.Setenv(PortFileEnv, portFile)
	o, err := config.Parse([]string{"--engine=go", "-l", "127.0.0.1", "-p", "-1", "-A"})
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncWriter
	done := make(chan int, 1)
	go func() {
		done <- Serve(o, Build{Version: "1.6.18-test"}, slog.New(slog.NewTextHandler(&stderr, nil)), &stderr)
	}()

	port := waitPort(t, portFile, done)
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	fmt.Fprint(c, "set k 0 0 5\r\nhello\r\nget k\r\n")
	for _, want := range []string{"STORED\r\n", "VALUE k 0 5\r\n", "hello\r\n", "END\r\n"} {
		if line, err := r.ReadString('\n'); line != want {
			t.Fatalf("read %q (%v), want %q", line, err, want)
		}
	}
	fmt.Fprint(c, "shutdown\r\n")
	select {
	case status := <-done:
		if status != 0 {
			t.Errorf("Serve = %d after shutdown, want 0; stderr:\n%s", status, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Serve did not return within 30 s of shutdown; stderr:\n%s", stderr.String())
	}
}

// waitPort reads the TCP port from memcached's port file once the server
// has written it (bounded; a Serve that returns first fails the test).
func waitPort(t *testing.T, path string, done <-chan int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case status := <-done:
			t.Fatalf("Serve returned %d before it listened", status)
		default:
		}
		if b, err := os.ReadFile(path); err == nil {
			var port int
			if _, err := fmt.Sscanf(string(b), "TCP INET: %d", &port); err == nil {
				return port
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no port file at %s within 30 s", path)
	return 0
}

// syncWriter is a buffer the server's goroutines and the test share.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

var _ io.Writer = (*syncWriter)(nil)
