package main

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestPing: `gocached ping ADDR` is the container health check: 0 when the
// server answers, 1 when nothing listens.
func TestPing(t *testing.T) {
	s := startServer(t)
	out, _, code := runBinary(t, "ping", s.addr)
	if code != 0 || !strings.HasPrefix(out, "VERSION ") {
		t.Errorf("ping %s: exit %d, %q", s.addr, code, out)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.wait(t)
	if _, _, code := runBinary(t, "ping", s.addr); code != 1 {
		t.Errorf("ping of a stopped server: exit %d, want 1", code)
	}
	if _, _, code := runBinary(t, "ping", "a", "b"); code != 2 {
		t.Errorf("ping with two arguments: exit %d, want 2", code)
	}
}

// TestClosedStderr: with -vv logging every connection, a stderr whose
// reader is gone must not kill the server (memcached survives it).
func TestClosedStderr(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	port, err := freeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", itoa(port))
	cmd := testproc.Command(binary, "-p", itoa(port), "-l", "127.0.0.1", "-vv")
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	// Wait until it listens (the log line is read to know), then close the
	// only reader of its stderr.
	r := bufio.NewReader(pr)
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no serving line: %v", err)
		}
		if strings.Contains(l, "gocached serving") {
			break
		}
	}
	pr.Close()
	for range 20 { // each connection logs at -vv: writes hit the broken pipe
		versionOK(t, addr)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("server died after its stderr closed: %v", err)
	}
}

// TestBuildLabel: a build label shows in -V and in `stats gocached` but
// never in the protocol's VERSION, which is memcached 1.6.45's bare number
// so that clients parsing it as major.minor.patch keep working.
func TestBuildLabel(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "gocached")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := testproc.GoBuild(ctx, gocachedPkg, bin, "-ldflags", "-X main.buildLabel=9.9.9-test"); err != nil {
		t.Fatal(err)
	}
	out, err := testproc.Command(bin, "-V").Output()
	if err != nil || string(out) != "gocached 1.6.45 (build 9.9.9-test)\n" {
		t.Errorf("-V = %q, %v", out, err)
	}
	s := startProcess(t, testproc.Command(bin, "-p", "-1", "-l", "127.0.0.1", "-v"))
	nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write([]byte("version\r\nstats gocached\r\n"))
	r := bufio.NewReader(nc)
	if l, _ := r.ReadString('\n'); l != "VERSION 1.6.45\r\n" {
		t.Errorf("VERSION reply %q, want %q whatever the build label", l, "VERSION 1.6.45")
	}
	for _, want := range []string{"STAT build 9.9.9-test\r\n", "END\r\n"} {
		if l, _ := r.ReadString('\n'); l != want {
			t.Errorf("stats gocached: %q, want %q", l, want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestManPageUpToDate: contrib/gocached.1 is what `gocached man` prints from
// the flag table, so the manual lists exactly the flags -h does.
func TestManPageUpToDate(t *testing.T) {
	want, _, code := runBinary(t, "man")
	if code != 0 || !strings.Contains(want, "\\fB\\-\\-listen\\fR") || !strings.Contains(want, ".SH OPTIONS") {
		t.Fatalf("gocached man: exit %d:\n%s", code, want)
	}
	got, err := os.ReadFile("../../contrib/gocached.1")
	if err != nil || string(got) != want {
		t.Errorf("contrib/gocached.1 is out of date (%v); regenerate it: go run ./cmd/gocached man > contrib/gocached.1", err)
	}
}

// TestGateFlags: -F, -f, -n, -D and -A reach the protocol: flush_all is
// refused, stats settings shows the size-class shape and detail on, and
// `shutdown` stops the server cleanly (without -A it is refused).
func TestGateFlags(t *testing.T) {
	s := startServer(t, "-F", "-f", "1.5", "-n", "96", "-D", ":", "-A")
	nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(nc)
	nc.Write([]byte("flush_all\r\n"))
	if l, _ := r.ReadString('\n'); l != "CLIENT_ERROR flush_all not allowed\r\n" {
		t.Errorf("flush_all with -F: %q", l)
	}
	nc.Write([]byte("stats settings\r\n"))
	got := map[string]string{}
	for {
		l, err := r.ReadString('\n')
		if err != nil || l == "END\r\n" {
			break
		}
		if f := strings.Fields(l); len(f) == 3 {
			got[f[1]] = f[2]
		}
	}
	for name, want := range map[string]string{"growth_factor": "1.50", "chunk_size": "96", "detail_enabled": "yes",
		"flush_enabled": "no", "shutdown_command": "yes"} {
		if got[name] != want {
			t.Errorf("stats settings %s = %q, want %q", name, got[name], want)
		}
	}
	nc.Write([]byte("shutdown\r\n"))
	if code := s.wait(t); code != 0 {
		t.Errorf("exit %d after shutdown; stderr:\n%s", code, s.stderr)
	}

	plain := startServer(t)
	c2, err := net.DialTimeout("tcp", plain.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetDeadline(time.Now().Add(5 * time.Second))
	c2.Write([]byte("shutdown\r\n"))
	if l, _ := bufio.NewReader(c2).ReadString('\n'); l != "SERVER_ERROR: shutdown not enabled\r\n" { // memcached 1.6.45's
		t.Errorf("shutdown without -A: %q", l)
	}
}

// TestASCIIAuthFile: -Y makes text clients authenticate first, with
// memcached's `set` carrying "user password".
func TestASCIIAuthFile(t *testing.T) {
	auth := filepath.Join(t.TempDir(), "auth")
	if err := os.WriteFile(auth, []byte("alice:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "-Y", auth)
	nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(nc)
	nc.Write([]byte("set auth 0 0 12\r\nalice s3cret\r\nversion\r\n"))
	if l, _ := r.ReadString('\n'); l != "STORED\r\n" {
		t.Fatalf("auth: %q", l)
	}
	if l, _ := r.ReadString('\n'); !strings.HasPrefix(l, "VERSION ") {
		t.Errorf("after auth: %q", l)
	}
	other, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetDeadline(time.Now().Add(5 * time.Second))
	other.Write([]byte("get k\r\n"))
	if l, _ := bufio.NewReader(other).ReadString('\n'); l != "CLIENT_ERROR unauthenticated\r\n" {
		t.Errorf("unauthenticated get: %q", l)
	}
}
