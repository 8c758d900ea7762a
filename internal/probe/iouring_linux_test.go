package probe

import (
	"os"
	"strings"
	"testing"
)

// TestIOURing agrees with the sysctl: with io_uring_disabled=2 the probe
// must say unsupported, with 0 (this project's machines) supported.
func TestIOURing(t *testing.T) {
	r := IOURing()
	b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
	if err != nil {
		t.Skipf("no kernel.io_uring_disabled here: %v", err)
	}
	switch strings.TrimSpace(string(b)) {
	case "2":
		if r.Supported {
			t.Errorf("io_uring_disabled=2 but probe says supported: %v", r)
		}
	case "0":
		if !r.Supported {
			t.Errorf("io_uring_disabled=0 but probe says unsupported: %v", r)
		}
	}
	if r.Sentence == "" {
		t.Error("no sentence")
	}
}
