package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestDoctorPinOrderMatchesServer: doctor reads --pin-cpus with the server's
// parser, so "3,1" puts reactor 0 on CPU 3 in both.
func TestDoctorPinOrderMatchesServer(t *testing.T) {
	f := gather("", "", "1,0")
	if f.pinErr != nil {
		t.Fatalf("gather: %v", f.pinErr)
	}
	if !slices.Equal(f.pin, []int{1, 0}) {
		t.Fatalf("pin = %v, want [1 0] (the order given)", f.pin)
	}
	f.cpus = map[int]bool{0: true, 1: true}
	r := &report{}
	judgePin(r, f)
	var b strings.Builder
	r.print(&b)
	if !strings.Contains(b.String(), "reactor 0 on CPU 1, reactor 1 on CPU 0") {
		t.Errorf("doctor says:\n%s\nwant reactor 0 on CPU 1, reactor 1 on CPU 0", b.String())
	}
}

// TestDoctorReportsIOURing: an io_uring the kernel refuses is a warning
// naming the way out, not a silent omission.
func TestDoctorReportsIOURing(t *testing.T) {
	f := gather("", "", "")
	f.uring.Supported = false
	f.uring.Sentence = "disabled by sysctl kernel.io_uring_disabled=2"
	r := judge(f)
	var b strings.Builder
	r.print(&b)
	if !strings.Contains(b.String(), "io_uring: disabled by sysctl") {
		t.Errorf("doctor says:\n%s\nwant an io_uring line", b.String())
	}
}
