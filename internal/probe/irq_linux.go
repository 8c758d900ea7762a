package probe

import (
	"fmt"
	"os"

	"github.com/gocached/gocached/internal/cpuset"
)

// IRQAffinity returns the CPUs IRQ irq may be delivered to, from
// /proc/irq/N/smp_affinity_list. On a real NIC each NAPI's IRQ should be
// pinned to the CPU of the reactor that serves that NAPI (see kernel/README.md).
func IRQAffinity(irq int) ([]int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq))
	if err != nil {
		return nil, fmt.Errorf("irq %d affinity: %w", irq, err)
	}
	return cpuset.Parse(string(b))
}
