package probe

import (
	"os"
	"testing"
)

func TestParseCapEff(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    uint64
		wantErr bool
	}{
		{"root", "Name:\tx\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\n", 0x1ffffffffff, false},
		{"net admin only", "CapEff:\t0000000000001000\n", 1 << 12, false},
		{"none", "CapEff:\t0000000000000000", 0, false},
		{"missing", "Name:\tx\nCapPrm:\t0\n", 0, true},
		{"garbage", "CapEff:\tzz\n", 0, true},
		{"CapEffX is not CapEff", "CapEffX:\t1\n", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseCapEff([]byte(tt.status))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: ParseCapEff = %#x, %v; want %#x, err %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseCapEff(f *testing.F) {
	f.Add([]byte("CapEff:\t000001ffffffffff\n"))
	f.Add([]byte("Name:\tx\nCapEff:\t0\n"))
	f.Add([]byte("CapEff:"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseCapEff(b) // must not panic
	})
}

func TestEffectiveCapsMatchesProc(t *testing.T) {
	got, err := EffectiveCaps()
	if err != nil {
		t.Fatal(err)
	}
	// The process-wide view (thread group leader) equals this thread's unless
	// someone changed per-thread caps, which no code here does outside
	// WithoutCap's own thread.
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseCapEff(b)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("capget effective %#x, /proc/self/status CapEff %#x", got, want)
	}
	r := HasCapNetAdmin()
	if r.Supported != (want&(1<<CapNetAdmin) != 0) || r.Sentence == "" {
		t.Fatalf("HasCapNetAdmin() = %+v with CapEff %#x", r, want)
	}
	t.Logf("%s", r)
}

func TestWithoutCap(t *testing.T) {
	had, err := HasCap(CapNetAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if !had {
		t.Skip("skipping: process lacks CAP_NET_ADMIN, nothing to drop")
	}
	err = WithoutCap(CapNetAdmin, func() error {
		r := HasCapNetAdmin()
		if r.Supported {
			t.Errorf("inside WithoutCap: %s", r)
		}
		if r.Sentence == "" {
			t.Error("empty sentence")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Restored for the whole process: the tests' own thread and procfs agree.
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ParseCapEff(b); err != nil || m&(1<<CapNetAdmin) == 0 {
		t.Fatalf("after WithoutCap CapEff %#x, %v", m, err)
	}
}
