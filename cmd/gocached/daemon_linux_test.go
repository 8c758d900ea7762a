package main

import (
	"context"
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

// TestDaemonWorkingDirectory: as memcached's daemon(3), -d moves to / (so a
// relative -P lands there), and -r keeps the directory for the core file;
// the daemon's standard error is /dev/null without -v.
func TestDaemonWorkingDirectory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		want  func(dir string) string
	}{
		{"-d", nil, func(string) string { return "/" }},
		{"-d -r", []string{"-r"}, func(dir string) string { return dir }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			port, err := freeTCPPort()
			if err != nil {
				t.Fatal(err)
			}
			pidFile := filepath.Join(dir, "d.pid")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append([]string{"-d", "-p", strconv.Itoa(port), "-l", "127.0.0.1", "-P", pidFile}, tc.flags...)...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("gocached -d: %v: %s", err, out)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatalf("no pid file: %v", err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if pid <= 0 {
				t.Fatalf("pid file %q", b)
			}
			defer syscall.Kill(pid, syscall.SIGKILL)
			cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
			if err != nil || cwd != tc.want(dir) {
				t.Errorf("daemon's working directory %q (%v), want %q", cwd, err, tc.want(dir))
			}
			if errOut, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/2"); errOut != os.DevNull {
				t.Errorf("daemon's standard error is %q, want %s", errOut, os.DevNull)
			}
			syscall.Kill(pid, syscall.SIGTERM)
			for deadline := time.Now().Add(15 * time.Second); syscall.Kill(pid, 0) == nil && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestDaemonStartFailureReason: when the background server cannot start,
// -d's parent exits with the server's status and its own reason
// (memcached's line first): 71 for a listener, and 67 for an unknown -u
// user, as memcached's -d exits before it forks.
func TestDaemonStartFailureReason(t *testing.T) {
	held, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "-d", "-p", strconv.Itoa(port), "-l", "127.0.0.1")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 71 {
		t.Fatalf("gocached -d with its port held: %v, output %q; want exit 71", err, out)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if first != "failed to listen on one of interface(s) 127.0.0.1: Address already in use" {
		t.Errorf("first line %q, want memcached's listen failure; all:\n%s", first, out)
	}
	if os.Geteuid() != 0 {
		return // -u is ignored unless root
	}
	out, err = exec.CommandContext(ctx, binary, "-d", "-p", "0", "-U", "0", "-s", filepath.Join(t.TempDir(), "s"), "-u", "no-such-user-here").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 67 || !strings.HasPrefix(string(out), "can't find the user no-such-user-here to switch to\n") {
		t.Errorf("gocached -d -u no-such-user-here: %v, output %q; want memcached's line and exit 67", err, out)
	}
}
