//go:build linux

package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/probe"
)

// RequireEnv, set to 1, turns a missing testbed from a skip into a failure
// (CI sets it).
const RequireEnv = "GOCACHED_REQUIRE_TESTBED"

// prereqs is what Available inspects, separated so the decision is testable
// without changing who runs the tests.
type prereqs struct {
	euid     int
	caps     uint64 // effective capability mask
	capsErr  error
	lookPath func(string) (string, error)
}

func currentPrereqs() prereqs {
	caps, err := probe.EffectiveCaps()
	return prereqs{euid: os.Geteuid(), caps: caps, capsErr: err, lookPath: exec.LookPath}
}

// missing lists, as short phrases, what stops the bed from being built.
func (p prereqs) missing() []string {
	var out []string
	if p.euid != 0 {
		out = append(out, fmt.Sprintf("not root (euid %d)", p.euid))
	} else if p.capsErr != nil {
		out = append(out, "cannot read capabilities: "+p.capsErr.Error())
	} else {
		for _, c := range []struct {
			bit  int
			name string
		}{{probe.CapNetAdmin, "CAP_NET_ADMIN"}, {probe.CapSysAdmin, "CAP_SYS_ADMIN"}} {
			if p.caps&(1<<uint(c.bit)) == 0 {
				out = append(out, "root without "+c.name)
			}
		}
	}
	for _, tool := range []string{"ip", "ethtool"} {
		if _, err := p.lookPath(tool); err != nil {
			out = append(out, tool+" not found in PATH")
		}
	}
	return out
}

// Available returns nil when this process can build a bed, or an error
// naming everything that is missing.
func Available() error {
	return currentPrereqs().availability()
}

func (p prereqs) availability() error {
	if m := p.missing(); len(m) > 0 {
		return fmt.Errorf("NAPI testbed unavailable: %s (needs root with CAP_NET_ADMIN and CAP_SYS_ADMIN, iproute2 and ethtool)", strings.Join(m, ", "))
	}
	return nil
}

// decision says what Up does when the bed cannot be built: skip, or fail
// because RequireEnv demands the bed.
type decision struct {
	fail   bool
	reason string // empty: go ahead
}

func decide(avail error, require string) decision {
	if avail == nil {
		return decision{}
	}
	if require == "1" {
		return decision{fail: true, reason: avail.Error() + "; " + RequireEnv + "=1 requires it"}
	}
	return decision{reason: "skipping: " + avail.Error() + "; set " + RequireEnv + "=1 to fail instead"}
}

// Up builds a fresh bed for a test and always tears it down in t.Cleanup,
// also when the test fails. Without root or the tools it skips the test
// (or fails it under GOCACHED_REQUIRE_TESTBED=1); if the prerequisites are
// there but building fails, that is a test failure.
func Up(t testing.TB) *Bed {
	t.Helper()
	if d := decide(Available(), os.Getenv(RequireEnv)); d.reason != "" {
		if d.fail {
			t.Fatal(d.reason)
		}
		t.Skip(d.reason)
	}
	// Leftovers of killed runs would otherwise accumulate.
	if err := Sweep(); err != nil {
		t.Logf("testbed: sweeping stale beds: %v", err)
	}
	b, err := New(UniqueName())
	if err != nil {
		t.Fatalf("testbed: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("testbed: teardown of %s: %v", b.Name, err)
		}
	})
	return b
}
