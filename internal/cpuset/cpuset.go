// Package cpuset reads and writes Linux CPU lists ("0,2,4-7"), the format of
// --pin-cpus and of /proc/irq/N/smp_affinity_list. It is the one parser of
// that format: the server, `gocached doctor` and the kernel probes all use
// it, so they always agree on which reactor lands on which CPU.
package cpuset

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxCPU bounds the CPU numbers accepted, so that a typo such as "0-99999999"
// is an error instead of a huge allocation. Linux's NR_CPUS tops out at 8192.
const MaxCPU = 1<<14 - 1

// Parse reads a CPU list in the order given: "3,1" is CPU 3 then CPU 1,
// because reactor i is pinned to the i-th entry. A CPU listed twice is an
// error (two reactors would share it by accident). Surrounding space is
// ignored; an empty list is nil.
func Parse(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	seen := make(map[int]bool)
	for _, part := range strings.Split(s, ",") {
		first, last, err := parseRange(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		for c := first; c <= last; c++ {
			if seen[c] {
				return nil, fmt.Errorf("cpu list %q: CPU %d listed twice", s, c)
			}
			seen[c] = true
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// parseRange reads "N" or "N-M".
func parseRange(part string) (first, last int, err error) {
	lo, hi, isRange := strings.Cut(part, "-")
	first, err = strconv.Atoi(lo)
	if err != nil || first < 0 || first > MaxCPU {
		return 0, 0, fmt.Errorf("bad CPU %q (want 0-%d)", lo, MaxCPU)
	}
	last = first
	if isRange {
		last, err = strconv.Atoi(hi)
		if err != nil || last < first || last > MaxCPU {
			return 0, 0, fmt.Errorf("bad range %q", part)
		}
	}
	return first, last, nil
}

// Format writes cpus as a list Parse reads back, folding runs of consecutive
// CPUs into ranges: [0 1 2 5] is "0-2,5". The order is kept.
func Format(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
