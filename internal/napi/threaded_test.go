package napi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func TestSupportsThreadedBusyPoll(t *testing.T) {
	tests := []struct {
		name        string
		threadedMax uint64
		want        bool
	}{
		{"no threaded attribute (before 6.17)", 0, false},
		{"threaded capped at enabled (6.17, 6.18)", 1, false},
		{"busy-poll allowed (6.19+)", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := (&fakeKernel{threadedMax: tt.threadedMax}).dial(t)
			got, err := c.SupportsThreadedBusyPoll()
			if err != nil || got != tt.want {
				t.Fatalf("SupportsThreadedBusyPoll = %v, %v; want %v", got, err, tt.want)
			}
			attrs, err := c.SetPolicyAttrs()
			if err != nil || attrs[attrNAPIThreaded] != (tt.threadedMax > 0) || !attrs[attrNAPIIRQSuspendTimeout] {
				t.Fatalf("SetPolicyAttrs = %v, %v", attrs, err)
			}
		})
	}
}

// The preset's napi-set fails with ErrNoThreadedBusyPoll, naming the kernel
// that has it, wherever the kernel refuses the value; it goes through
// where the kernel takes it.
func TestSetThreadedBusyPoll(t *testing.T) {
	k := mustModeKnobs("threadedbusy")
	for _, limit := range []uint64{0, 1, 2} {
		fk := &fakeKernel{napis: vethNAPIs(), threadedMax: limit}
		c := fk.dial(t)
		id := fk.napis[0].ID
		err := c.Set(id, k)
		if limit < ThreadedBusyPoll {
			if !errors.Is(err, ErrNoThreadedBusyPoll) || !strings.Contains(err.Error(), ThreadedBusyPollKernel) {
				t.Errorf("limit %d: Set = %v, want ErrNoThreadedBusyPoll naming %s", limit, err, ThreadedBusyPollKernel)
			}
			continue
		}
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		n, err := c.NAPI(id)
		if err != nil || !n.BusyPollsThreaded() {
			t.Fatalf("read back %s, %v", n, err)
		}
	}
	// Another refusal of a request that carries threaded=enabled is not
	// about busy polling.
	fk := &fakeKernel{napis: vethNAPIs()}
	if err := fk.dial(t).Set(fk.napis[0].ID, Knobs{Threaded: Uint32(ThreadedEnabled)}); errors.Is(err, ErrNoThreadedBusyPoll) || err == nil {
		t.Errorf("threaded=enabled on a kernel without the attribute: %v", err)
	}
}

// Apply saves the threaded value found and Restore puts it back; on a
// kernel that refuses busy-poll nothing changes and no state file stays.
func TestApplyRestoreThreaded(t *testing.T) {
	k := mustModeKnobs("threadedbusy")
	for _, limit := range []uint64{1, 2} {
		fk := &fakeKernel{napis: vethNAPIs(), threadedMax: limit}
		for i := range fk.napis {
			fk.napis[i].Knobs = Knobs{DeferHardIRQs: Uint32(0), GROFlushTimeout: Uint64(0), IRQSuspendTimeout: Uint64(0),
				Threaded: Uint32(uint32(i % 2))}
		}
		c := fk.dial(t)
		before := knobsOf(t, c, 0)
		path := filepath.Join(t.TempDir(), "state.json")
		_, err := Apply(c, "veth0", 0, k, path)
		if limit == 1 {
			if !errors.Is(err, ErrNoThreadedBusyPoll) {
				t.Fatalf("Apply on a 6.18-like kernel: %v", err)
			}
			if _, serr := os.Stat(path); serr == nil {
				t.Error("refused Apply left a state file")
			}
			assertKnobs(t, before, knobsOf(t, c, 0))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for id, s := range knobsOf(t, c, 0) {
			if s != k.String() {
				t.Errorf("napi %d: %s, want %s", id, s, k)
			}
		}
		if _, err := Restore(c, path); err != nil {
			t.Fatal(err)
		}
		assertKnobs(t, before, knobsOf(t, c, 0))
	}
}

func assertKnobs(t *testing.T, want, got map[uint32]string) {
	t.Helper()
	for id, s := range want {
		if got[id] != s {
			t.Errorf("napi %d: %s, want %s", id, got[id], s)
		}
	}
}

// The probe's request carries threaded=busy-poll and then a malformed
// defer-hard-irqs; which attribute the kernel's extended ack blames is the
// answer.
func TestProbeVerdict(t *testing.T) {
	req, err := encodeThreadedProbe(8193)
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := netlink.UnmarshalAttributes(req)
	if err != nil || len(attrs) != 3 || attrs[1].Type != attrNAPIThreaded || attrs[2].Type != attrNAPIDeferHardIRQs ||
		len(attrs[2].Data) != 2 {
		t.Fatalf("probe request %v, %v: want id, threaded, then a 2-byte defer-hard-irqs", attrs, err)
	}
	at := func(i int) int { // the extack offset of attribute i
		off := requestHeaderLen
		for _, a := range attrs[:i] {
			off += 4 + (len(a.Data)+3)&^3
		}
		return off
	}
	nlErr := func(errno unix.Errno, attr int, msg string) error {
		off := 0
		if attr >= 0 {
			off = at(attr)
		}
		return &netlink.OpError{Op: "receive", Err: errno, Message: msg, Offset: off}
	}
	tests := []struct {
		name    string
		err     error
		want    bool
		wantErr error // nil: no error
		anyErr  bool  // some other error
	}{
		{"6.19: past threaded, the malformed attribute refused", nlErr(unix.EINVAL, 2, "invalid attribute length"), true, nil, false},
		{"6.19, length checked as a range", nlErr(unix.ERANGE, 2, "invalid attribute length"), true, nil, false},
		{"6.17/6.18: threaded out of range", nlErr(unix.ERANGE, 1, "integer out of range"), false, ErrNoThreadedBusyPoll, false},
		{"before 6.17: threaded unknown", nlErr(unix.EINVAL, 1, "Unknown attribute type"), false, ErrNoThreadedBusyPoll, false},
		{"no napi-set", nlErr(unix.EOPNOTSUPP, -1, ""), false, ErrNoThreadedBusyPoll, false},
		{"unprivileged", nlErr(unix.EPERM, -1, ""), false, ErrPermission, false},
		{"no extended ack", nlErr(unix.EINVAL, -1, ""), false, nil, true},
		{"accepted", nil, false, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := probeVerdict("probe", tt.err, req)
			switch {
			case got != tt.want:
				t.Fatalf("supported = %v, want %v (err %v)", got, tt.want, err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			case tt.wantErr == nil && !tt.anyErr && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.anyErr && (err == nil || errors.Is(err, ErrNoThreadedBusyPoll)):
				t.Fatalf("err = %v, want an error that is no verdict", err)
			}
		})
	}
}

func TestKernelWords(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&netlink.OpError{Op: "receive", Err: unix.ERANGE, Message: "integer out of range"}, "integer out of range: numerical result out of range"},
		{errNoThreadedBusyPoll("op", &netlink.OpError{Op: "receive", Err: unix.ERANGE, Message: "integer out of range"}), "integer out of range: numerical result out of range"},
		{&netlink.OpError{Op: "receive", Err: unix.EPERM}, "operation not permitted"},
	}
	for _, tt := range tests {
		if got := KernelWords(tt.err); got != tt.want {
			t.Errorf("KernelWords(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
