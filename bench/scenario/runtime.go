//go:build linux

package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Why CPU time here comes from two sources.
//
// The kernel this runs on accounts utime/stime and the busy fields of
// /proc/stat by sampling the scheduler tick (TICK_CPU_ACCOUNTING, no
// VIRT_CPU_ACCOUNTING_GEN), while idle time under NO_HZ is measured exactly.
// A core that alternates between short bursts of work and idle, which is
// what every sleeping poll mode does at low load, loses most of its busy
// ticks: in a 4 s run of suspend20 at 12.7 k requests/s the server core's
// busy ticks added up to 1.7 s while the core was idle for only 1.2 s of
// the 4.0 s, and the threads' exact run time (schedstat) was 2.7 s. A
// busy-polling core never idles and is counted in full, so tick-based
// numbers flatter every sleeping mode against fullbusy.
//
// So per process and per kthread the report uses the scheduler's exact run
// time (/proc/PID/task/*/schedstat, nanoseconds), and per core the busy
// time is what is left of the wall clock after idle, iowait and steal.

// RuntimeNs is the exact CPU time, in nanoseconds, that every live thread
// of process pid has run (the first field of each thread's schedstat).
// Threads that already exited are not counted; the servers measured here
// keep their threads for their whole life.
func RuntimeNs(pid int) (uint64, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum uint64
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			if os.IsNotExist(err) {
				continue // the thread exited between the listing and the read
			}
			return 0, err
		}
		ns, err := ParseSchedstat(b)
		if err != nil {
			return 0, fmt.Errorf("task %s: %w", e.Name(), err)
		}
		sum += ns
	}
	return sum, nil
}

// ParseSchedstat returns the run time of a schedstat line ("run wait
// slices"), in nanoseconds.
func ParseSchedstat(b []byte) (uint64, error) {
	f := bytes.Fields(b)
	if len(f) < 1 {
		return 0, fmt.Errorf("schedstat: empty")
	}
	ns, err := strconv.ParseUint(string(f[0]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("schedstat run time: %w", err)
	}
	return ns, nil
}

// wallBusyTicks is the busy time of one core over an interval of wall
// ticks: the wall clock less the exactly measured idle and iowait and the
// stolen time, never below the sampled busy ticks (which are a floor).
func wallBusyTicks(d SystemCPU, wall float64) float64 {
	rest := wall - float64(d.Idle+d.IOWait+d.Steal)
	return max(rest, float64(d.Busy()), 0)
}
