//go:build linux

package scenario

import (
	"os"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want uint64
		err  bool
	}{
		{"plain", "1234 (memcached) S 1 1234 1234 0 -1 4194560 130 0 0 0 250 75 0 0 20 0 4 0 100 0 0", 325, false},
		{"comm with spaces and parens", "99 (a b) c)) R 1 99 99 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 0 0", 10, false},
		{"no comm", "1234 memcached S 1", 0, true},
		{"short", "1 (x) S 1 2 3", 0, true},
		{"bad number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 x 3 0 0", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseProcStat([]byte(tt.in))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("%s: ParseProcStat = %d, %v; want %d, error %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func TestProcessCPUSelf(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the tick counter moves (bounded).
	x := 0
	for i := 0; i < 2e9; i++ {
		x += i
		if i%1e6 == 0 {
			if now, _ := ProcessCPU(os.Getpid()); now > before {
				return
			}
		}
	}
	t.Errorf("no CPU ticks accounted after a busy loop (%d)", x)
}

func TestParseSystemCPU(t *testing.T) {
	in := "cpu  100 2 30 4000 5 6 7 8 9 10\ncpu0 50 1 15 2000 2 3 3 4 0 0\nintr 1\n"
	got, err := ParseSystemCPU(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := SystemCPU{User: 100, Nice: 2, System: 30, Idle: 4000, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got.Busy() != 145 || got.Total() != 4158 {
		t.Errorf("busy %d total %d", got.Busy(), got.Total())
	}
	if d := want.Sub(SystemCPU{User: 50, Idle: 1000, Steal: 8}); d.User != 50 || d.Idle != 3000 || d.Steal != 0 {
		t.Errorf("Sub = %+v", d)
	}
	for _, bad := range []string{"", "intr 5\n", "cpu 1 2 3\n", "cpu 1 2 3 x 5 6 7 8\n"} {
		if _, err := ParseSystemCPU(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseSystemCPU(%q) succeeded", bad)
		}
	}
	if _, err := ReadSystemCPU(); err != nil {
		t.Errorf("ReadSystemCPU: %v", err)
	}
}

func TestParseCPUs(t *testing.T) {
	in := "cpu  10 0 5 100 0 1 2 3 0 0\ncpu0 4 0 2 50 0 0 1 1 0 0\ncpu1 6 0 3 50 0 1 1 2 0 0\nintr 5\nctxt 9\n"
	all, per, err := ParseCPUs(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if all.Steal != 3 || all.Busy() != 18 || len(per) != 2 || per[1].Steal != 2 || per[0].Busy() != 7 {
		t.Errorf("all %+v per %+v", all, per)
	}
	for _, bad := range []string{"cpu0 1 2 3 4 5 6 7 8\n", "cpu 1 2 3 4 5 6 7 8\ncpuX 1 2 3 4 5 6 7 8\n", "cpu 1 2\n"} {
		if _, _, err := ParseCPUs(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
		err  bool
	}{
		{"123456789 2000 31\n", 123456789, false},
		{"7", 7, false},
		{"", 0, true},
		{"x 1 2", 0, true},
	} {
		got, err := ParseSchedstat([]byte(tt.in))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSchedstat(%q) = %d, %v", tt.in, got, err)
		}
	}
}

// The exact run time of this process moves with a busy loop and is at
// least what the sampled ticks say.
func TestRuntimeNsSelf(t *testing.T) {
	before, err := RuntimeNs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := 0; i < 1e8; i++ {
		x += i
	}
	after, err := RuntimeNs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("run time did not move over a busy loop (%d -> %d, %d)", before, after, x)
	}
}
