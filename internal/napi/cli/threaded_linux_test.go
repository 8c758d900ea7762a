package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocached/gocached/kernel/testbed"
)

// TestBedDoctorThreadedBusy checks doctor's threaded busy-poll line against
// the kernel's own answer to a hand-built napi-set threaded=busy-poll on a
// NAPI of the bed, and that doctor's probe changes nothing.
func TestBedDoctorThreadedBusy(t *testing.T) {
	b := testbed.Up(t)
	before := rawIn(t, b)
	var id uint32
	for id = range before {
		break
	}
	orig := before[id]
	if !orig.HasThreaded {
		t.Fatalf("the kernel does not report threaded (6.17+): %+v", orig)
	}
	var setErr error
	if err := b.InNS(b.ServerNS, func() error { setErr = rawSetThreaded(id, 2); return nil }); err != nil {
		t.Fatal(err)
	}
	accepted := setErr == nil
	t.Logf("kernel answer to napi-set id %d threaded=2: %v", id, setErr)
	if accepted {
		if err := b.InNS(b.ServerNS, func() error { return rawSetThreaded(id, uint32(orig.Threaded)) }); err != nil {
			t.Fatalf("put back threaded=%d: %v", orig.Threaded, err)
		}
	}
	if after := rawIn(t, b); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("knobs not back after the kernel's answer: %v -> %v", before, after)
	}

	code, stdout, _ := runIn(t, b, b.ServerNS, "doctor", "--interface", b.ServerDev, "--poll-mode", "threadedbusy")
	t.Logf("doctor --poll-mode threadedbusy: exit %d\n%s", code, stdout)
	want, wantCode := "FAIL threaded busy-poll: not supported by this kernel: napi-set on NAPI", ExitFail
	if accepted {
		want, wantCode = "OK   threaded busy-poll: supported: napi-set on NAPI", ExitOK
	}
	if code != wantCode || !strings.Contains(stdout, want) || (!accepted && !strings.Contains(stdout, "fix: Linux 6.19+")) {
		t.Errorf("kernel accepted=%v; doctor exit %d (want %d), want a line %q:\n%s", accepted, code, wantCode, want, stdout)
	}
	code, stdout, _ = runIn(t, b, b.ServerNS, "doctor", "--interface", b.ServerDev)
	want = "OK   threaded busy-poll: not supported by this kernel (Linux 6.19+ has it; only --poll-mode threadedbusy needs it)"
	if accepted {
		want = "OK   threaded busy-poll: supported"
	}
	if code != ExitOK || !strings.Contains(stdout, want) {
		t.Errorf("doctor without a mode: exit %d, want a line %q:\n%s", code, want, stdout)
	}
	if after := rawIn(t, b); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("doctor changed knobs: %v -> %v", before, after)
	}
}
