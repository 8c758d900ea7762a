package main

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
	cmd := exec.Command(binary, "-p", itoa(port), "-l", "127.0.0.1", "-vv")
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

// TestBuildLabel: a build label shows in -V but never in the protocol's
// VERSION, which stays memcached's so clients keep parsing it.
func TestBuildLabel(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "gocached")
	build := exec.Command("go", "build", "-ldflags", "-X main.buildLabel=9.9.9-test", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-V").Output()
	if err != nil || string(out) != "gocached "+version+" (build 9.9.9-test)\n" {
		t.Errorf("-V = %q, %v", out, err)
	}
	s := startProcess(t, exec.Command(bin, "-p", "0", "-l", "127.0.0.1", "-v"))
	nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write([]byte("version\r\n"))
	if l, _ := bufio.NewReader(nc).ReadString('\n'); l != "VERSION "+version+"\r\n" {
		t.Errorf("VERSION reply %q, want %q whatever the build label", l, "VERSION "+version)
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
