//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	nbo "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/testproc"
	"github.com/gocached/gocached/kernel/testbed"
)

// knobValues are one NAPI's three knobs, as plain numbers.
type knobValues struct {
	deferHardIRQs       uint64
	groFlushTimeoutNs   uint64
	irqSuspendTimeoutNs uint64
}

func (k knobValues) String() string {
	return fmt.Sprintf("defer=%d gro=%dns suspend=%dns", k.deferHardIRQs, k.groFlushTimeoutNs, k.irqSuspendTimeoutNs)
}

// netdev genetlink numbers (include/uapi/linux/netdev.h), spelled out here
// so that rawNAPIKnobs shares no code with internal/napi.
const (
	rawCmdNAPIGet      = 11
	rawAttrIfindex     = 1
	rawAttrID          = 2
	rawAttrDefer       = 5
	rawAttrGROFlush    = 6
	rawAttrIRQSuspend  = 7
	rawNetdevFamilyStr = "netdev"
)

// rawNAPIKnobs dumps the NAPIs of ifindex in the calling thread's network
// namespace straight over generic netlink: the independent read the preset
// test compares gocached's own view with.
func rawNAPIKnobs(ifindex int) (map[uint32]knobValues, error) {
	conn, err := genetlink.Dial(nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	fam, err := conn.GetFamily(rawNetdevFamilyStr)
	if err != nil {
		return nil, err
	}
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(rawAttrIfindex, uint32(ifindex))
	data, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := conn.Execute(genetlink.Message{
		Header: genetlink.Header{Command: rawCmdNAPIGet, Version: fam.Version},
		Data:   data,
	}, fam.ID, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, err
	}
	out := map[uint32]knobValues{}
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, err
		}
		var id uint32
		var k knobValues
		for ad.Next() {
			b := ad.Bytes()
			var v uint64
			switch len(b) { // kernel "uint" attributes come as 4 or 8 bytes
			case 4:
				v = uint64(nbo.NativeEndian.Uint32(b))
			case 8:
				v = nbo.NativeEndian.Uint64(b)
			default:
				continue
			}
			switch ad.Type() {
			case rawAttrID:
				id = uint32(v)
			case rawAttrDefer:
				k.deferHardIRQs = v
			case rawAttrGROFlush:
				k.groFlushTimeoutNs = v
			case rawAttrIRQSuspend:
				k.irqSuspendTimeoutNs = v
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
		out[id] = k
	}
	return out, nil
}

// serverKnobs is rawNAPIKnobs of the bed's server device.
func serverKnobs(t *testing.T, b *testbed.Bed) map[uint32]knobValues {
	t.Helper()
	var got map[uint32]knobValues
	if err := b.InNS(b.ServerNS, func() (err error) {
		got, err = rawNAPIKnobs(b.ServerIfindex)
		return err
	}); err != nil {
		t.Fatalf("raw napi-get dump in %s: %v", b.ServerNS, err)
	}
	if len(got) != testbed.Queues {
		t.Fatalf("raw napi-get dump: %d NAPIs on %s, want %d", len(got), b.ServerDev, testbed.Queues)
	}
	return got
}

// presetDistinct gives every server NAPI its own unusual knob values, so
// that restoring them proves gocached put back what it found, per NAPI.
func presetDistinct(t *testing.T, b *testbed.Bed) map[uint32]knobValues {
	t.Helper()
	want := map[uint32]knobValues{}
	err := b.InNS(b.ServerNS, func() error {
		c, err := napi.Dial()
		if err != nil {
			return err
		}
		defer c.Close()
		napis, err := c.NAPIs(b.ServerIfindex)
		if err != nil {
			return err
		}
		for i, n := range napis {
			k := knobValues{uint64(3 + i), uint64(7000 + 1000*i), uint64(1_500_000 + i)}
			if err := c.Set(n.ID, napi.Knobs{DeferHardIRQs: napi.Uint32(uint32(k.deferHardIRQs)),
				GROFlushTimeout: napi.Uint64(k.groFlushTimeoutNs), IRQSuspendTimeout: napi.Uint64(k.irqSuspendTimeoutNs)}); err != nil {
				return err
			}
			want[n.ID] = k
		}
		return nil
	})
	if err != nil {
		t.Fatalf("presetting knobs: %v", err)
	}
	return want
}

// startInBed starts gocached in the server namespace with args plus
// --engine=epoll -l SERVERIP -p -1 -v and a private state file.
func startInBed(t *testing.T, b *testbed.Bed, args ...string) (*server, string) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "napi-state.json")
	args = append([]string{"--engine=epoll", "-l", b.ServerIP, "-p", "-1", "-v", "--napi-state", state}, args...)
	return startProcess(t, serverCmd(context.Background(), b, binary, args...)), state
}

// shownNAPI is one NAPI of `napi show --json`, decoded by field name as a
// script would, rather than through the cli package's types.
type shownNAPI struct {
	ID                  uint32  `json:"id"`
	Interface           string  `json:"interface"`
	DeferHardIRQs       *uint64 `json:"defer_hard_irqs"`
	GROFlushTimeoutNs   *uint64 `json:"gro_flush_timeout_ns"`
	IRQSuspendTimeoutNs *uint64 `json:"irq_suspend_timeout_ns"`
}

func (n shownNAPI) knobs() (knobValues, bool) {
	if n.DeferHardIRQs == nil || n.GROFlushTimeoutNs == nil || n.IRQSuspendTimeoutNs == nil {
		return knobValues{}, false
	}
	return knobValues{*n.DeferHardIRQs, *n.GROFlushTimeoutNs, *n.IRQSuspendTimeoutNs}, true
}

// showJSON runs `gocached napi show --json --interface DEV` in the server
// namespace.
func showJSON(t *testing.T, b *testbed.Bed) []shownNAPI {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := serverCmd(ctx, b, binary, "napi", "show", "--json", "--interface", b.ServerDev)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gocached napi show: %v; stderr %q", err, stderr.String())
	}
	var show struct {
		NAPIs []shownNAPI `json:"napis"`
	}
	if err := json.Unmarshal(out, &show); err != nil {
		t.Fatalf("napi show --json: %v\n%s", err, out)
	}
	return show.NAPIs
}

func TestPollModePresets(t *testing.T) {
	b := testbed.Up(t)
	tests := []struct {
		mode string
		want knobValues
	}{
		{"base", knobValues{0, 0, 0}},
		{"defer20", knobValues{100, 20_000, 0}},
		{"napibusy", knobValues{100, 200_000, 0}},
		{"fullbusy", knobValues{100, 5_000_000, 0}},
		{"suspend0", knobValues{0, 0, 20_000_000}},
		{"suspend20", knobValues{100, 20_000, 20_000_000}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			old := presetDistinct(t, b)
			s, state := startInBed(t, b, "--poll-mode", tt.mode)

			shown := showJSON(t, b)
			if len(shown) != testbed.Queues {
				t.Errorf("napi show: %d NAPIs, want %d", len(shown), testbed.Queues)
			}
			for _, n := range shown {
				if got, ok := n.knobs(); !ok || got != tt.want || n.Interface != b.ServerDev {
					t.Errorf("napi show: NAPI %d on %q has %s (all reported: %v), want %s on %s", n.ID, n.Interface, got, ok, tt.want, b.ServerDev)
				}
			}
			for id, got := range serverKnobs(t, b) {
				if got != tt.want {
					t.Errorf("netlink: NAPI %d has %s, want %s", id, got, tt.want)
				}
			}
			st, err := napi.LoadState(state)
			if err != nil {
				t.Fatalf("state file while serving: %v", err)
			}
			for _, saved := range st.NAPIs {
				if got := (knobValues{uint64(deref(saved.DeferHardIRQs)), deref(saved.GROFlushTimeout), deref(saved.IRQSuspendTimeout)}); got != old[saved.ID] {
					t.Errorf("state file: NAPI %d saved as %s, want the old %s", saved.ID, got, old[saved.ID])
				}
			}
			checkReactorStats(t, b, s.addr, tt.mode, tt.want)

			stopAndCheckRestored(t, s, b, old, state)
			if log := s.stderr.String(); !strings.Contains(log, "poll mode applied") || !strings.Contains(log, "NAPI knobs restored") {
				t.Errorf("log lacks the apply/restore lines:\n%s", log)
			}
		})
	}
}

// checkReactorStats connects from the client namespace and checks that
// `stats reactors` names the mode on every reactor and, on the reactor that
// learned a NAPI ID from this connection, reports the kernel's knobs.
func checkReactorStats(t *testing.T, b *testbed.Bed, addr, mode string, want knobValues) {
	t.Helper()
	nc := dialFromClient(t, b, addr)
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(nc)
	// One request first, so that the serving reactor has seen the
	// connection's NAPI ID before stats are taken.
	fmt.Fprintf(nc, "version\r\n")
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("version: %v", err)
	}
	stats := readStats(t, nc, "reactors")
	modes, withNAPI := 0, 0
	for name, v := range stats {
		id, field, ok := strings.Cut(strings.TrimPrefix(name, "reactor:"), ":")
		if !ok {
			continue
		}
		switch field {
		case "poll_mode":
			modes++
			if v != mode {
				t.Errorf("stats %s = %q, want %q", name, v, mode)
			}
		case "napi_id":
			if v == "0" {
				continue
			}
			withNAPI++
			p := "reactor:" + id + ":"
			got := fmt.Sprintf("defer=%s gro=%sns suspend=%sns", stats[p+"defer_hard_irqs"], stats[p+"gro_flush_timeout"], stats[p+"irq_suspend_timeout"])
			if got != want.String() {
				t.Errorf("stats reactors: reactor %s (NAPI %s) knobs %s, want %s", id, v, got, want)
			}
		}
	}
	if modes == 0 || withNAPI == 0 {
		t.Errorf("stats reactors: %d poll_mode lines, %d reactors with a NAPI ID; want both > 0: %v", modes, withNAPI, stats)
	}
}

// dialFromClient opens a TCP connection to addr from inside the client
// namespace; the socket stays there whichever thread uses it afterwards.
func dialFromClient(t *testing.T, b *testbed.Bed, addr string) net.Conn {
	t.Helper()
	var nc net.Conn
	if err := b.InNS(b.ClientNS, func() (err error) {
		nc, err = net.DialTimeout("tcp", addr, 5*time.Second)
		return err
	}); err != nil {
		t.Fatalf("dial %s from %s: %v", addr, b.ClientNS, err)
	}
	return nc
}

// TestPollModeNeedsCapNetAdmin drops to nobody inside the server namespace:
// the mode must fail at once, in one line naming the capability, and leave
// the knobs alone.
func TestPollModeNeedsCapNetAdmin(t *testing.T) {
	b := testbed.Up(t)
	old := presetDistinct(t, b)
	// The test binary's directory is private to root; nobody must be able
	// to run the binary inside it.
	if err := os.Chmod(filepath.Dir(binary), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, binary, "--engine=epoll", "--poll-mode", "suspend20", "-l", b.ServerIP, "-p", "-1",
		"--napi-state", filepath.Join(t.TempDir(), "state.json"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}},
		Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Forked from a thread inside the server namespace, the child starts
	// there; as nobody it could not enter it itself. So it is exec's Start,
	// not testproc's (which forks from its own thread, in the host
	// namespace); the parent-death signal is then tied to InNS's thread,
	// which outlives the child unless InNS cannot switch back (and fails).
	if err := b.InNS(b.ServerNS, cmd.Cmd.Start); err != nil {
		t.Fatalf("start as nobody: %v", err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("as nobody: %v, want exit 1; stderr %q", err, stderr.String())
	}
	msg := stderr.String()
	t.Logf("refused start: %s", strings.TrimSpace(msg))
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "CAP_NET_ADMIN") || !strings.Contains(msg, b.ServerDev) {
		t.Errorf("stderr = %q, want one line naming CAP_NET_ADMIN and %s", msg, b.ServerDev)
	}
	for id, got := range serverKnobs(t, b) {
		if got != old[id] {
			t.Errorf("after the refused start: NAPI %d has %s, want %s untouched", id, got, old[id])
		}
	}
}

// TestRestoreAfterCrash kills gocached with SIGKILL and puts the knobs back
// with `gocached napi restore` from the state file it left.
func TestRestoreAfterCrash(t *testing.T) {
	b := testbed.Up(t)
	old := presetDistinct(t, b)
	s, state := startInBed(t, b, "--poll-mode", "suspend20")
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.wait(t)
	for id, got := range serverKnobs(t, b) {
		if got == old[id] {
			t.Fatalf("NAPI %d still has the old %s while suspend20 was applied", id, got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := serverCmd(ctx, b, binary, "napi", "restore", "--interface", b.ServerDev, "--state", state).CombinedOutput()
	if err != nil {
		t.Fatalf("gocached napi restore: %v\n%s", err, out)
	}
	for id, got := range serverKnobs(t, b) {
		if got != old[id] {
			t.Errorf("after napi restore: NAPI %d has %s, want %s", id, got, old[id])
		}
	}
}

// TestPollModeWildcardRunsAsBase: with -l 0.0.0.0 there is no single
// interface to tune, so the mode runs as base and the knobs stay as they
// were; `stats reactors` still reads them back for the NAPI a connection
// arrives on.
func TestPollModeWildcardRunsAsBase(t *testing.T) {
	b := testbed.Up(t)
	old := presetDistinct(t, b)
	s, state := startInBed(t, b, "--poll-mode", "suspend20", "-l", "0.0.0.0")
	_, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(b.ServerIP, port)
	for id, got := range serverKnobs(t, b) {
		if got != old[id] {
			t.Errorf("NAPI %d has %s under a wildcard listener, want %s untouched", id, got, old[id])
		}
	}
	if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file with nothing applied: %v, want none", err)
	}

	nc := dialFromClient(t, b, addr)
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(nc)
	fmt.Fprintf(nc, "version\r\n")
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	stats := readStats(t, nc, "reactors")
	seen := 0
	for name, v := range stats {
		id, ok := strings.CutSuffix(name, ":napi_id")
		if !ok || v == "0" {
			continue
		}
		var napiID uint32
		fmt.Sscan(v, &napiID)
		want, known := old[napiID]
		if !known {
			t.Errorf("stats %s = %s, not a NAPI of %s", name, v, b.ServerDev)
			continue
		}
		seen++
		got := fmt.Sprintf("defer=%s gro=%sns suspend=%sns", stats[id+":defer_hard_irqs"], stats[id+":gro_flush_timeout"], stats[id+":irq_suspend_timeout"])
		if got != want.String() || stats[id+":poll_mode"] != "base" {
			t.Errorf("stats %s: mode %q knobs %s, want base and %s", id, stats[id+":poll_mode"], got, want)
		}
	}
	if seen == 0 {
		t.Errorf("no reactor learned a NAPI ID: %v", stats)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	if log := s.stderr.String(); strings.Count(log, "no NAPI to act on") != 1 {
		t.Errorf("want one line saying the mode has no NAPI to act on; log:\n%s", log)
	}
}

// serverCmd is b.ServerCmd for a process that dies with the test binary.
func serverCmd(ctx context.Context, b *testbed.Bed, name string, args ...string) *testproc.Cmd {
	return &testproc.Cmd{Cmd: b.ServerCmd(ctx, name, args...)}
}

// deref is a knob's value, 0 when the kernel has none.
func deref[T uint32 | uint64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}
