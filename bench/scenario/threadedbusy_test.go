//go:build linux

package scenario

import (
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/kernel/testbed"
)

// TestThreadedBusySkipOnTestbed: on a real bed the matrix plans
// threadedbusy exactly where the kernel's napi-set policy allows
// threaded=busy-poll, and otherwise skips it saying the kernel lacks it;
// the other scenarios are never skipped for the kernel's sake.
func TestThreadedBusySkipOnTestbed(t *testing.T) {
	b := testbed.Up(t)
	var supported bool
	if err := b.InNS(b.ServerNS, func() error {
		c, err := napi.Dial()
		if err != nil {
			return err
		}
		defer c.Close()
		supported, err = c.SupportsThreadedBusyPoll()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r := &runner{o: &Options{}, bed: b, pollMode: true, logf: t.Logf}
	why := r.skipReason(Gocached, "threadedbusy")
	t.Logf("threadedbusy on this kernel: supported %v, skip reason %q", supported, why)
	switch {
	case supported && why != "":
		t.Errorf("the kernel allows threaded busy polling, yet threadedbusy is skipped: %s", why)
	case !supported && !strings.Contains(why, "lacks threaded busy polling"):
		t.Errorf("skip reason %q does not say the kernel lacks threaded busy polling", why)
	}
	for _, sc := range []string{"base", "suspend20", "fullbusy"} {
		if why := r.skipReason(Gocached, sc); why != "" {
			t.Errorf("%s skipped: %s", sc, why)
		}
	}
}
