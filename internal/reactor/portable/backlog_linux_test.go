package portable

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"github.com/gocached/gocached/internal/testproc"
)

// TestGoSetBacklog reads the backlog back from the kernel: `ss -ltn` shows
// a listener's backlog in its Send-Q column.
func TestGoSetBacklog(t *testing.T) {
	ss, err := exec.LookPath("ss")
	if err != nil {
		t.Skip("ss (iproute2) is not installed")
	}
	for _, backlog := range []int{7, 77} {
		e, err := newTestEngine(reactor.Config{Listen: "127.0.0.1", Backlog: backlog}, enginetest.NewFakeStore().NewSession(0))
		if err != nil {
			t.Fatal(err)
		}
		addr := e.Addr().String()
		out, err := testproc.Command(ss, "-ltnH", "src", addr).Output()
		e.closeListeners()
		if err != nil {
			t.Fatalf("ss: %v", err)
		}
		f := strings.Fields(string(out))
		if len(f) < 3 || f[2] != fmt.Sprint(backlog) {
			t.Errorf("listener %s: ss says %q, want Send-Q (backlog) %d", addr, out, backlog)
		}
	}
}
