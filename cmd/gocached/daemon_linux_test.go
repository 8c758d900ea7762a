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

	"github.com/gocached/gocached/internal/testproc"
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
			killDaemonAtCleanup(t, pidFile)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := testproc.CommandContext(ctx, binary, append([]string{"-d", "-p", strconv.Itoa(port), "-l", "127.0.0.1", "-P", pidFile}, tc.flags...)...)
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
			cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
			if err != nil || cwd != tc.want(dir) {
				t.Errorf("daemon's working directory %q (%v), want %q", cwd, err, tc.want(dir))
			}
			if errOut, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/2"); errOut != os.DevNull {
				t.Errorf("daemon's standard error is %q, want %s", errOut, os.DevNull)
			}
			syscall.Kill(pid, syscall.SIGTERM)
			waitGone(t, pid)
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
	// Both starts must fail; should one succeed, its daemon is killed.
	pidFile := filepath.Join(t.TempDir(), "d.pid")
	killDaemonAtCleanup(t, pidFile)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, binary, "-d", "-p", strconv.Itoa(port), "-l", "127.0.0.1", "-P", pidFile)
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
	out, err = testproc.CommandContext(ctx, binary, "-d", "-p", "0", "-U", "0", "-s", filepath.Join(t.TempDir(), "s"), "-u", "no-such-user-here", "-P", pidFile).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 67 || !strings.HasPrefix(string(out), "can't find the user no-such-user-here to switch to\n") {
		t.Errorf("gocached -d -u no-such-user-here: %v, output %q; want memcached's line and exit 67", err, out)
	}
}

// killDaemonAtCleanup kills, when the test ends, the daemon whose pid -d
// wrote to pidFile, if it still runs. A daemon forks twice and leaves its
// own session, so the parent-death signal of testproc.Cmd does not reach
// it: without this a failed test would leave a server running. Register
// it before starting the daemon, so that any failure after is covered.
func killDaemonAtCleanup(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return // never started, or stopped cleanly (it removes the file)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 0 || !isOurDaemon(pid) {
			return
		}
		syscall.Kill(pid, syscall.SIGKILL)
		waitGone(t, pid)
	})
}

// isOurDaemon reports whether pid runs the gocached binary under test: a
// pid file left by a killed daemon may name a pid since reused.
func isOurDaemon(pid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && exe == binary
}

// waitGone waits until pid has exited. The daemon is not our child: once
// it exits, init reaps it, and until then it is a zombie, which counts as
// gone.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running 30 s after it was told to stop", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports whether pid has exited (no such process, or a zombie).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}
