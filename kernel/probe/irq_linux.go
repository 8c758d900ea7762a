package probe

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ParseCPUList parses the kernel's CPU list format ("0-3,8,10-11", as in
// /proc/irq/N/smp_affinity_list and /sys/devices/system/node/nodeN/cpulist)
// into ascending, distinct CPU numbers.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	seen := make(map[int]bool)
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return nil, fmt.Errorf("cpu list %q: bad cpu %q", s, lo)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		if last-first > 1<<16 {
			return nil, fmt.Errorf("cpu list %q: range %q too large", s, part)
		}
		for c := first; c <= last; c++ {
			if !seen[c] {
				seen[c] = true
				cpus = append(cpus, c)
			}
		}
	}
	sortInts(cpus)
	return cpus, nil
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// IRQAffinity returns the CPUs IRQ irq may be delivered to, from
// /proc/irq/N/smp_affinity_list. On a real NIC each NAPI's IRQ should be
// pinned to the CPU of the reactor that serves that NAPI (see kernel/README.md).
func IRQAffinity(irq int) ([]int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq))
	if err != nil {
		return nil, fmt.Errorf("irq %d affinity: %w", irq, err)
	}
	return ParseCPUList(string(b))
}
