package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"0", "[0]", false},
		{"0-3", "[0 1 2 3]", false},
		{"0-1,8,10-11\n", "[0 1 8 10 11]", false},
		{"3,1,2,1", "[1 2 3]", false},
		{"", "[]", false},
		{"2-1", "", true},
		{"a", "", true},
		{"1,", "", true},
		{"-1", "", true},
		{"0-99999999", "", true},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseCPUList(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && fmt.Sprint(got) != tt.want {
			t.Errorf("ParseCPUList(%q) = %v, want %s", tt.in, got, tt.want)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3", "0-1,8,10-11", "", "5-2", "1,,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		for i := 1; i < len(cpus); i++ {
			if cpus[i] <= cpus[i-1] {
				t.Fatalf("ParseCPUList(%q) = %v: not ascending and distinct", s, cpus)
			}
		}
	})
}

// Every IRQ on this machine has an affinity the parser understands, and it
// names only CPUs that exist.
func TestIRQAffinityOfRealIRQs(t *testing.T) {
	dirs, err := filepath.Glob("/proc/irq/[0-9]*")
	if err != nil || len(dirs) == 0 {
		t.Skipf("skipping: no /proc/irq entries (%v)", err)
	}
	checked := 0
	for _, d := range dirs {
		irq, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "smp_affinity_list")); err != nil {
			continue
		}
		cpus, err := IRQAffinity(irq)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cpus {
			if _, err := os.Stat(fmt.Sprintf("/sys/devices/system/cpu/cpu%d", c)); err != nil {
				t.Errorf("irq %d affine to cpu %d, which does not exist", irq, c)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Skip("skipping: no IRQ exposes smp_affinity_list")
	}
	if _, err := IRQAffinity(1 << 30); err == nil {
		t.Error("IRQAffinity of a nonexistent irq succeeded")
	}
}
