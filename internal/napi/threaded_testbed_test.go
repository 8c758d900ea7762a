//go:build linux

package napi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gocached/gocached/kernel/testbed"
)

// TestBedThreadedBusyPoll sets threaded=busy-poll on a real NAPI and checks
// that the non-changing probe and the policy read give the kernel's answer,
// and that the preset applies and restores (a 6.19+ kernel) or fails with
// ErrNoThreadedBusyPoll and changes nothing (6.17, 6.18).
func TestBedThreadedBusyPoll(t *testing.T) {
	b := testbed.Up(t)
	c := dialIn(t, b, b.ServerNS)
	napis, err := c.NAPIs(b.ServerIfindex)
	if err != nil {
		t.Fatal(err)
	}
	n := napis[0]
	if n.Threaded == nil {
		t.Fatalf("kernel does not report threaded (6.17+): %s", n)
	}
	before := knobsOf(t, c, b.ServerIfindex)

	probed, probeErr := c.ProbeThreadedBusyPoll(n.ID)
	if probeErr != nil && !errors.Is(probeErr, ErrNoThreadedBusyPoll) {
		t.Fatalf("probe failed without a verdict: %v", probeErr)
	}
	assertKnobs(t, before, knobsOf(t, c, b.ServerIfindex)) // the probe changed nothing
	policy, err := c.SupportsThreadedBusyPoll()
	if err != nil {
		t.Fatal(err)
	}

	// The kernel's own answer: a real napi-set of threaded=busy-poll.
	setErr := c.Set(n.ID, Knobs{Threaded: Uint32(ThreadedBusyPoll)})
	accepted := setErr == nil
	pol, err := c.setPolicy()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kernel answer to napi-set id %d threaded=busy-poll: errno %q, extack %q (probe %v: %v; policy: threaded %+v)",
		n.ID, bareErrnoOf(setErr), extackMessage(setErr), probed, probeErr, pol[attrNAPIThreaded])
	if accepted {
		got, err := c.NAPI(n.ID)
		if err != nil || !got.BusyPollsThreaded() || got.PID == 0 {
			t.Errorf("after threaded=busy-poll: %s pid %d, %v", got, got.PID, err)
		}
		if err := c.Set(n.ID, Knobs{Threaded: n.Threaded}); err != nil {
			t.Fatalf("put back threaded=%d: %v", *n.Threaded, err)
		}
	} else if !errors.Is(setErr, ErrNoThreadedBusyPoll) {
		t.Fatalf("refusal not recognised as missing threaded busy polling: %v", setErr)
	}
	if probed != accepted || policy != accepted {
		t.Fatalf("kernel accepted=%v, probe says %v, policy says %v", accepted, probed, policy)
	}
	assertKnobs(t, before, knobsOf(t, c, b.ServerIfindex))

	// The preset through Apply/Restore.
	path := filepath.Join(t.TempDir(), "napi-"+b.ServerDev+".json")
	k := mustMode(t, "threadedbusy").Knobs()
	_, err = Apply(c, b.ServerDev, b.ServerIfindex, k, path)
	if !accepted {
		if !errors.Is(err, ErrNoThreadedBusyPoll) {
			t.Fatalf("Apply threadedbusy: %v, want ErrNoThreadedBusyPoll", err)
		}
		if _, serr := os.Stat(path); serr == nil {
			t.Error("refused Apply left a state file")
		}
		assertKnobs(t, before, knobsOf(t, c, b.ServerIfindex))
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range knobsOf(t, c, b.ServerIfindex) {
		if s != k.String() {
			t.Errorf("napi %d: %s, want %s", id, s, k)
		}
	}
	if _, err := Restore(c, path); err != nil {
		t.Fatal(err)
	}
	assertKnobs(t, before, knobsOf(t, c, b.ServerIfindex))
}

func bareErrnoOf(err error) string {
	if err == nil {
		return "none"
	}
	return bareErrno(err)
}
