package main

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPidFileAsMemcachedSaves: -P is written as memcached's save_pid writes
// it: a warning first when the old file names a running process, the pid
// written to FILE.tmp and renamed over FILE (nothing left beside it).
func TestPidFileAsMemcachedSaves(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "gocached.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "-P", pidFile)
	b, err := os.ReadFile(pidFile)
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(s.cmd.Process.Pid) {
		t.Fatalf("pid file %q, %v; want %d", b, err, s.cmd.Process.Pid)
	}
	if _, err := os.Stat(pidFile + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("%s.tmp left behind (%v)", pidFile, err)
	}
	want := "WARNING: The pid file contained the following (running) pid: " + strconv.Itoa(os.Getpid())
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.stderr.String(), want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.stderr.String(), want) {
		t.Errorf("stderr lacks memcached's %q:\n%s", want, s.stderr)
	}
}

// TestPidFileReplacesOtherUsersFile: with -u, a pid file root left in a
// directory the user may write is replaced (memcached renames its FILE.tmp
// over it), not refused because the user may not open it for writing.
func TestPidFileReplacesOtherUsersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		skipMissing(t, "needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		skipMissing(t, "no user nobody")
	}
	dir, err := os.MkdirTemp("", "gocached-pid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	pidFile := filepath.Join(dir, "mc.pid")
	if err := os.WriteFile(pidFile, []byte("999999999\n"), 0o644); err != nil { // root's
		t.Fatal(err)
	}
	s := startServer(t, "-u", "nobody", "-P", pidFile)
	fi, err := os.Stat(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pidFile)
	if strings.TrimSpace(string(b)) != strconv.Itoa(s.cmd.Process.Pid) || strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid)) != nobody.Uid {
		t.Errorf("pid file %q owned by %d; want %d owned by nobody (%s); stderr:\n%s", b, fi.Sys().(*syscall.Stat_t).Uid, s.cmd.Process.Pid, nobody.Uid, s.stderr)
	}
}

// TestPidFileLeftToSuccessor: a stop removes the pid file only while it
// still names this server. A successor started during the stop (the port
// is free while replies in flight are finished) has written its own pid
// there, and removing that would leave its service manager and init script
// without a way to find it.
func TestPidFileLeftToSuccessor(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "gocached.pid")
	s := startServer(t, "-P", pidFile)
	successor := strconv.Itoa(os.Getpid()) + "\n"
	if err := os.WriteFile(pidFile, []byte(successor), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, s.stderr)
	}
	if b, err := os.ReadFile(pidFile); err != nil || string(b) != successor {
		t.Errorf("pid file after the stop: %q, %v; want the successor's %q kept", b, err, successor)
	}
}
