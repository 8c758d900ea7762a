package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

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
