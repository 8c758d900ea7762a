package pollmode

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/kernel/testbed"
)

// TestBedStartThreadedBusy starts --poll-mode threadedbusy on the bed's
// server interface: where the kernel lacks threaded busy polling the start
// fails with one sentence that says so and names the kernel that has it,
// and nothing is changed; where it has it, the NAPIs busy-poll until the
// restore puts the values found back.
func TestBedStartThreadedBusy(t *testing.T) {
	b := testbed.Up(t)
	state := filepath.Join(t.TempDir(), "napi.json")
	o, err := config.Parse([]string{"-l", testbed.ServerIP, "--poll-mode", "threadedbusy", "--napi-state", state})
	if err != nil {
		t.Fatal(err)
	}
	var c *napi.Client
	if err := b.InNS(b.ServerNS, func() (err error) { c, err = napi.Dial(); return err }); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	knobs := func() string {
		t.Helper()
		napis, err := c.NAPIs(b.ServerIfindex)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, n := range napis {
			s = append(s, n.Knobs.String())
		}
		return strings.Join(s, "; ")
	}
	supported, err := c.SupportsThreadedBusyPoll()
	if err != nil {
		t.Fatal(err)
	}
	before := knobs()

	var s *Session
	var startErr error
	if err := b.InNS(b.ServerNS, func() error {
		s, startErr = Start(o, slog.New(slog.DiscardHandler))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !supported {
		if startErr == nil {
			s.Restore()
			s.Close()
			t.Fatal("threadedbusy started on a kernel without threaded busy polling")
		}
		msg := startErr.Error()
		t.Logf("start refused: %s", msg)
		for _, want := range []string{"--poll-mode threadedbusy", b.ServerDev, "lacks threaded busy polling", napi.ThreadedBusyPollKernel, "nothing was changed"} {
			if !strings.Contains(msg, want) {
				t.Errorf("start error lacks %q: %s", want, msg)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("start error spans lines: %q", msg)
		}
		if _, err := os.Stat(state); err == nil {
			t.Error("refused start left a state file")
		}
		if after := knobs(); after != before {
			t.Errorf("refused start changed knobs: %s -> %s", before, after)
		}
		return
	}
	if startErr != nil {
		t.Fatal(startErr)
	}
	defer s.Close()
	if got := knobs(); !strings.Contains(got, "threaded=busy-poll") || strings.Contains(got, "threaded=enabled") || strings.Contains(got, "threaded=disabled") {
		t.Errorf("after start: %s", got)
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if after := knobs(); after != before {
		t.Errorf("after restore: %s, want %s", after, before)
	}
}
