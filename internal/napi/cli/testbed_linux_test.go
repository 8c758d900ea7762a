package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
	"github.com/gocached/gocached/kernel/testbed"
	"golang.org/x/sys/unix"
)

// The test binary doubles as the gocached CLI for subprocess tests: with
// childEnv=1 it runs Run on its arguments, optionally after entering the
// network namespace childNetNS and dropping to uid/gid childUID.
const (
	childEnv   = "GOCACHED_CLI_CHILD"
	childNetNS = "GOCACHED_CLI_NETNS"
	childUID   = "GOCACHED_CLI_UID"
	nobody     = 65534
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(childMain())
	}
	testproc.VerifyMain(m)
}

func childMain() int {
	runtime.LockOSThread() // Run stays on this thread, in the namespace entered here
	if ns := os.Getenv(childNetNS); ns != "" {
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child: enter netns:", err)
			return 99
		}
	}
	if s := os.Getenv(childUID); s != "" {
		id, _ := strconv.Atoi(s)
		// syscall.Set* apply to every thread of the process.
		if err := syscall.Setgroups(nil); err != nil {
			fmt.Fprintln(os.Stderr, "child: setgroups:", err)
			return 99
		}
		if err := syscall.Setgid(id); err != nil {
			fmt.Fprintln(os.Stderr, "child: setgid:", err)
			return 99
		}
		if err := syscall.Setuid(id); err != nil {
			fmt.Fprintln(os.Stderr, "child: setuid:", err)
			return 99
		}
	}
	return Run("gocached", os.Args[1:], os.Stdout, os.Stderr)
}

// child runs the test binary as the CLI with extra environment.
func child(t *testing.T, cmd *testproc.Cmd, env ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return 0, out.String(), errb.String()
}

// runIn runs the CLI in-process inside namespace ns of the bed.
func runIn(t *testing.T, b *testbed.Bed, ns string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if err := b.InNS(ns, func() error {
		code, stdout, stderr = run(args...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return code, stdout, stderr
}

func rawIn(t *testing.T, b *testbed.Bed) map[uint32]rawKnobs {
	t.Helper()
	var got map[uint32]rawKnobs
	if err := b.InNS(b.ServerNS, func() (err error) { got, err = rawNAPIDump(b.ServerIfindex); return err }); err != nil {
		t.Fatal(err)
	}
	if len(got) != testbed.Queues {
		t.Fatalf("raw read found %d NAPIs, want %d", len(got), testbed.Queues)
	}
	return got
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// setDistinct gives every NAPI its own knob values through `napi set`.
func setDistinct(t *testing.T, b *testbed.Bed) {
	t.Helper()
	i := 0
	for id := range rawIn(t, b) {
		code, _, stderr := runIn(t, b, b.ServerNS, "napi", "set", "--id", fmt.Sprint(id),
			"--defer-hard-irqs", fmt.Sprint(10+i), "--gro-flush-timeout", fmt.Sprint(30000+i),
			"--irq-suspend-timeout", fmt.Sprint(2_000_000+i))
		if code != ExitOK {
			t.Fatalf("napi set %d: exit %d: %s", id, code, stderr)
		}
		i++
	}
}

func TestBedShowJSONAgreesWithRawRead(t *testing.T) {
	b := testbed.Up(t)
	setDistinct(t, b)
	code, stdout, stderr := child(t, &testproc.Cmd{Cmd: b.ServerCmd(ctx(t), os.Args[0], "napi", "show", "--interface", b.ServerDev, "--json")})
	if code != ExitOK {
		t.Fatalf("napi show: exit %d: %s", code, stderr)
	}
	var doc struct {
		NAPIs []struct {
			ID        uint32  `json:"id"`
			Ifindex   int     `json:"ifindex"`
			Interface string  `json:"interface"`
			IRQ       int     `json:"irq"`
			Defer     *uint64 `json:"defer_hard_irqs"`
			GRO       *uint64 `json:"gro_flush_timeout_ns"`
			Suspend   *uint64 `json:"irq_suspend_timeout_ns"`
		} `json:"napis"`
		Queues []struct {
			Type string `json:"type"`
		} `json:"queues"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("napi show --json: %v\n%s", err, stdout)
	}
	raw := rawIn(t, b)
	if len(doc.NAPIs) != len(raw) {
		t.Fatalf("show lists %d NAPIs, raw read %d", len(doc.NAPIs), len(raw))
	}
	for _, n := range doc.NAPIs {
		r, ok := raw[n.ID]
		if !ok {
			t.Errorf("show lists NAPI %d the raw read does not know", n.ID)
			continue
		}
		if n.Defer == nil || n.GRO == nil || n.Suspend == nil {
			t.Errorf("NAPI %d: knobs missing from JSON", n.ID)
			continue
		}
		if *n.Defer != r.Defer || *n.GRO != r.GRO || *n.Suspend != r.Suspend || n.Ifindex != int(r.Ifindex) {
			t.Errorf("NAPI %d: show %d/%d/%d ifindex %d, raw %d/%d/%d ifindex %d", n.ID,
				*n.Defer, *n.GRO, *n.Suspend, n.Ifindex, r.Defer, r.GRO, r.Suspend, r.Ifindex)
		}
		if n.Interface != b.ServerDev || n.IRQ != -1 {
			t.Errorf("NAPI %d: interface %q irq %d, want %s and none", n.ID, n.Interface, n.IRQ, b.ServerDev)
		}
	}
	var rx int
	for _, q := range doc.Queues {
		if q.Type == "rx" {
			rx++
		}
	}
	if rx != testbed.Queues {
		t.Errorf("show lists %d rx queues, want %d", rx, testbed.Queues)
	}
	// The table agrees too: one row per NAPI with its knobs.
	code, table, _ := runIn(t, b, b.ServerNS, "napi", "show", "--interface", b.ServerDev)
	if code != ExitOK {
		t.Fatalf("table: exit %d", code)
	}
	for id, r := range raw {
		row := fmt.Sprintf("%d  %s  %d  -    -    -       %d  %d  %d", id, b.ServerDev, b.ServerIfindex, r.Defer, r.GRO, r.Suspend)
		if !strings.Contains(strings.Join(strings.Fields(table), " "), strings.Join(strings.Fields(row), " ")) {
			t.Errorf("table lacks row %q:\n%s", row, table)
		}
	}
}

func TestBedApplyRestorePresets(t *testing.T) {
	b := testbed.Up(t)
	setDistinct(t, b)
	before := rawIn(t, b)
	state := filepath.Join(t.TempDir(), "napi-"+b.ServerDev+".json")
	tests := []struct {
		mode                string
		defer_, gro, suspnd uint64
	}{
		{"suspend20", 100, 20_000, 20_000_000},
		{"suspend0", 0, 0, 20_000_000},
		{"napibusy", 100, 200_000, 0},
		{"fullbusy", 100, 5_000_000, 0},
		{"defer50", 100, 50_000, 0},
		{"base", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			code, stdout, stderr := runIn(t, b, b.ServerNS, "napi", "apply", "--interface", b.ServerDev,
				"--poll-mode", tt.mode, "--state", state)
			if code != ExitOK {
				t.Fatalf("apply: exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "on 4 NAPIs") {
				t.Errorf("apply said %q", stdout)
			}
			for id, r := range rawIn(t, b) {
				if r.Defer != tt.defer_ || r.GRO != tt.gro || r.Suspend != tt.suspnd {
					t.Errorf("NAPI %d after %s: %d/%d/%d, want %d/%d/%d", id, tt.mode,
						r.Defer, r.GRO, r.Suspend, tt.defer_, tt.gro, tt.suspnd)
				}
			}
			code, stdout, stderr = runIn(t, b, b.ServerNS, "napi", "restore", "--interface", b.ServerDev, "--state", state)
			if code != ExitOK || !strings.Contains(stdout, "restored 4 NAPIs") {
				t.Fatalf("restore: exit %d: %s%s", code, stdout, stderr)
			}
			for id, r := range rawIn(t, b) {
				if r != before[id] {
					t.Errorf("NAPI %d after restore: %+v, want %+v", id, r, before[id])
				}
			}
		})
	}
}

func TestBedDoctor(t *testing.T) {
	b := testbed.Up(t)
	code, stdout, _ := runIn(t, b, b.ServerNS, "doctor", "--interface", b.ServerDev, "--poll-mode", "suspend20", "--pin-cpus", "0")
	if code != ExitOK {
		t.Fatalf("doctor on the bed: exit %d:\n%s", code, stdout)
	}
	for _, want := range []string{
		fmt.Sprintf("OK   interface %s: ifindex %d, 4 NAPIs, 4 rx queues", b.ServerDev, b.ServerIfindex),
		"OK   irq-suspend-timeout: napi-set accepts it",
		"have no hardware IRQ",
		"WARN pin-cpus: 1 CPUs for 4 NAPIs",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, stdout)
		}
	}
}

// As uid 65534 (no capabilities) setting knobs fails with one line naming
// CAP_NET_ADMIN, changes nothing and leaves no state file.
func TestBedUnprivileged(t *testing.T) {
	b := testbed.Up(t)
	before := rawIn(t, b)
	var id uint32
	for id = range before {
		break
	}
	state := filepath.Join(t.TempDir(), "state.json")
	env := []string{childNetNS + "=" + b.ServerNS, childUID + "=" + fmt.Sprint(nobody)}
	for _, args := range [][]string{
		{"napi", "set", "--id", fmt.Sprint(id), "--defer-hard-irqs", "100"},
		{"napi", "apply", "--interface", b.ServerDev, "--poll-mode", "suspend20", "--state", state},
	} {
		t.Run(args[1], func(t *testing.T) {
			code, stdout, stderr := child(t, testproc.CommandContext(ctx(t), os.Args[0], args...), env...)
			if code != ExitFail {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, ExitFail, stdout, stderr)
			}
			oneLineErr(t, stderr, "CAP_NET_ADMIN")
		})
	}
	if after := rawIn(t, b); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("knobs changed by unprivileged runs: %v -> %v", before, after)
	}
	if _, err := os.Stat(state); err == nil {
		t.Error("unprivileged apply left a state file")
	}
	code, stdout, _ := child(t, testproc.CommandContext(ctx(t), os.Args[0], "doctor", "--interface", b.ServerDev, "--poll-mode", "suspend20"), env...)
	if code != ExitFail || !strings.Contains(stdout, "FAIL privileges:") {
		t.Errorf("unprivileged doctor: exit %d:\n%s", code, stdout)
	}
}

// Started unprivileged from the first instruction (SysProcAttr.Credential),
// in the host namespace: napi-set is refused before the id is even looked up.
func TestUnprivilegedSetCredential(t *testing.T) {
	args := []string{"napi", "set", "--id", "1", "--defer-hard-irqs", "0"}
	if os.Geteuid() != 0 {
		code, _, stderr := run(args...) // already unprivileged
		if code != ExitFail {
			t.Fatalf("exit %d", code)
		}
		oneLineErr(t, stderr, "CAP_NET_ADMIN")
		return
	}
	bin := copyExecutable(t)
	cmd := testproc.CommandContext(ctx(t), bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	code, stdout, stderr := child(t, cmd)
	if code != ExitFail {
		t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, ExitFail, stdout, stderr)
	}
	oneLineErr(t, stderr, "napi set", "CAP_NET_ADMIN", "run as root")
}

// copyExecutable puts the test binary where uid 65534 can execute it (the
// go test build directory is private to root).
func copyExecutable(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its parent directory is private too.
	dir, err := os.MkdirTemp("", "napi-cli-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gocached-cli-test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
