//go:build linux

package testbed

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// Some behaviour can only be seen from outside a test: that a failed test
// still tears its bed down, that a killed one leaves a bed Sweep removes, and
// that an unprivileged run skips. The parent re-runs this test binary with
// childEnv naming the role; the child tests below do nothing otherwise.
const (
	childEnv     = "GOCACHED_TESTBED_CHILD"
	childNameEnv = "GOCACHED_TESTBED_CHILD_NAMEFILE"
)

func childRole(t *testing.T, role string) {
	if os.Getenv(childEnv) != role {
		t.Skipf("helper process for the %q check; runs only when re-executed by its parent test", role)
	}
}

func TestChildFailsAfterUp(t *testing.T) {
	childRole(t, "fail")
	b := Up(t)
	if err := os.WriteFile(os.Getenv(childNameEnv), []byte(b.Name), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Fatal("deliberate failure after Up")
}

func TestChildHangsAfterUp(t *testing.T) {
	childRole(t, "hang")
	b := Up(t)
	if err := os.WriteFile(os.Getenv(childNameEnv), []byte(b.Name), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Second) // the parent kills us long before
}

func TestChildUpUnprivileged(t *testing.T) {
	childRole(t, "unprivileged")
	Up(t)
	t.Error("Up returned a bed to an unprivileged process")
}

// child prepares the re-execution of binary for one child test and role.
func child(ctx context.Context, binary, test, role string, env ...string) *testproc.Cmd {
	cmd := testproc.CommandContext(ctx, binary, "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), childEnv+"="+role), env...)
	return cmd
}

func readName(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("child did not report its bed: %v", err)
	}
	return string(b)
}

func TestFailedTestStillTearsDown(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(decide(err, "").reason)
	}
	nameFile := filepath.Join(t.TempDir(), "name")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := child(ctx, os.Args[0], "TestChildFailsAfterUp", "fail", childNameEnv+"="+nameFile).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "deliberate failure after Up") {
		t.Fatalf("child should have failed deliberately: %v\n%s", err, out)
	}
	assertGone(t, readName(t, nameFile))
}

func TestSweepRemovesBedOfKilledRun(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(decide(err, "").reason)
	}
	sweepers := []struct {
		name  string
		sweep func() error
	}{
		{"Sweep", Sweep},
		{"testbed.sh gc", func() error {
			out, err := testproc.Command("../testbed.sh", "gc").CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}},
	}
	for _, sw := range sweepers {
		t.Run(sw.name, func(t *testing.T) {
			name := killedBed(t)
			left := &Bed{ServerNS: name + "-srv", ClientNS: name + "-cli"}
			if !left.Exists() {
				// Only another test process's Up (which sweeps too) can do this.
				t.Skipf("skipping: bed %s was swept by a concurrent test process first", name)
			}
			defer left.Close()
			if err := sw.sweep(); err != nil {
				t.Fatal(err)
			}
			assertGone(t, name)
		})
	}
}

// killedBed starts a child test that builds a bed and hangs, kills it with
// SIGKILL (so no cleanup runs), and returns the name of the bed it left.
func killedBed(t *testing.T) string {
	t.Helper()
	nameFile := filepath.Join(t.TempDir(), "name")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := child(ctx, os.Args[0], "TestChildHangsAfterUp", "hang", childNameEnv+"="+nameFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("child never reported its bed")
		}
		if b, err := os.ReadFile(nameFile); err == nil && len(b) > 0 {
			return string(b)
		}
	}
}

// copyExecutable places a copy of this test binary where an unprivileged
// user can run it (the go build cache is private to root).
func copyExecutable(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gct-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(dir, "testbed.test")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// As nobody, Up must skip with a message that says why and how to make it
// fail instead; with GOCACHED_REQUIRE_TESTBED=1 it must fail.
func TestUpSkipsOrFailsWhenNotRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to start an unprivileged child (the decision itself is covered by TestDecide)")
	}
	bin := copyExecutable(t)
	tests := []struct {
		require string
		wantOK  bool
		want    []string
	}{
		{"", true, []string{"--- SKIP: TestChildUpUnprivileged", "skipping: NAPI testbed unavailable: not root (euid 65534)", RequireEnv + "=1 to fail instead"}},
		{"1", false, []string{"--- FAIL: TestChildUpUnprivileged", "not root (euid 65534)", RequireEnv + "=1 requires it"}},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := child(ctx, bin, "TestChildUpUnprivileged", "unprivileged", RequireEnv+"="+tt.require)
		cmd.Dir = filepath.Dir(bin)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		cancel()
		if (err == nil) != tt.wantOK {
			t.Errorf("require=%q: child exit %v, want success %v\n%s", tt.require, err, tt.wantOK, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("require=%q: output lacks %q:\n%s", tt.require, w, out)
			}
		}
	}
}
