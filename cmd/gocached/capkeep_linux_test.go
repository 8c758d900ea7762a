//go:build linux

package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gocached/gocached/kernel/testbed"
)

// TestPollModeWithUserRestoresKnobs: with -u and a poll mode, the server
// drops to the user, only one of its threads keeps CAP_NET_ADMIN (and
// nothing else), and a SIGTERM still puts the NAPI knobs back and removes
// the state file.
func TestPollModeWithUserRestoresKnobs(t *testing.T) {
	b := testbed.Up(t)
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("no user nobody: %v", err)
	}
	old := presetDistinct(t, b)
	want := knobValues{100, 20_000, 20_000_000} // suspend20
	// The state file's directory must let nobody remove the file.
	dir, err := os.MkdirTemp("", "gocached-capkeep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "napi-state.json")
	if err := os.Chmod(filepath.Dir(binary), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startProcess(t, serverCmd(context.Background(), b, binary, "--engine=epoll", "-l", b.ServerIP, "-p", "-1", "-v",
		"--napi-state", state, "--poll-mode", "suspend20", "-u", "nobody"))

	for id, got := range serverKnobs(t, b) {
		if got != want {
			t.Errorf("while serving: NAPI %d has %s, want %s", id, got, want)
		}
	}
	pid := s.cmd.Process.Pid
	if uid := procStatusField(t, pid, "Uid:"); !strings.HasPrefix(uid, nobody.Uid+"\t") {
		t.Errorf("server Uid line %q, want %s (nobody)", uid, nobody.Uid)
	}
	keepers, others := threadCaps(t, pid)
	if keepers != 1 || others != 0 {
		t.Errorf("threads with exactly CAP_NET_ADMIN: %d, with other capabilities: %d; want 1 and 0", keepers, others)
	}

	stopAndCheckRestored(t, s, b, old, state)
	if log := s.stderr.String(); !strings.Contains(log, "NAPI knobs restored") || !strings.Contains(log, "keeps CAP_NET_ADMIN") {
		t.Errorf("log lacks the drop/restore lines:\n%s", log)
	}
}

// stopAndCheckRestored stops s with SIGTERM and checks that it exits 0,
// every NAPI of the bed has its value from before the start (old) again,
// and the state file is gone.
func stopAndCheckRestored(t *testing.T, s *server, b *testbed.Bed, old map[uint32]knobValues, state string) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0; stderr:\n%s", code, s.stderr)
	}
	for id, got := range serverKnobs(t, b) {
		if got != old[id] {
			t.Errorf("after SIGTERM: NAPI %d has %s, want the old %s", id, got, old[id])
		}
	}
	if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file after the restore: %v, want it removed", err)
	}
}

// threadCaps counts pid's threads whose effective capability set is exactly
// CAP_NET_ADMIN, and those with any other nonzero set.
func threadCaps(t *testing.T, pid int) (keepers, others int) {
	t.Helper()
	tasks, err := filepath.Glob(filepath.Join("/proc", itoa(pid), "task", "*", "status"))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("threads of %d: %v", pid, err)
	}
	const netAdmin = "0000000000001000" // bit 12
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if eff, ok := strings.CutPrefix(line, "CapEff:"); ok {
				switch eff = strings.TrimSpace(eff); eff {
				case netAdmin:
					keepers++
				case "0000000000000000":
				default:
					others++
				}
			}
		}
	}
	return keepers, others
}
