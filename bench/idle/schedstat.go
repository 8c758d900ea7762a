// Package idle measures what a server costs when nobody asks it anything:
// how often its threads are put on a CPU (wake-ups) and how much CPU they
// use, read from the scheduler's own per-thread accounting. A cache that
// wakes hundreds of times a second for nothing costs CPU on every host it
// runs on and keeps cores out of deep idle states.
package idle

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// threadStat is one thread's scheduler accounting
// (/proc/PID/task/TID/schedstat): time run on a CPU and times put on one.
type threadStat struct {
	RunNs  uint64
	Slices uint64
}

// parseSchedstat reads "run_ns wait_ns timeslices".
func parseSchedstat(b []byte) (threadStat, error) {
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return threadStat{}, fmt.Errorf("schedstat %q: want three fields", b)
	}
	run, err1 := strconv.ParseUint(f[0], 10, 64)
	slices, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return threadStat{}, fmt.Errorf("schedstat %q: not numbers", b)
	}
	return threadStat{RunNs: run, Slices: slices}, nil
}

// snapshot is every live thread of a process, by thread id.
type snapshot map[int]threadStat

// readSnapshot reads the schedstat of each of pid's threads. A thread that
// exits while it is read is left out.
func readSnapshot(pid int) (snapshot, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	s := snapshot{}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue
		}
		st, err := parseSchedstat(b)
		if err != nil {
			return nil, err
		}
		s[tid] = st
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%s: no threads with schedstat (kernel without CONFIG_SCHEDSTATS?)", dir)
	}
	return s, nil
}

// RunTimes is the CPU time (ns) each live thread of pid has used, by
// thread id.
func RunTimes(pid int) (map[int]uint64, error) {
	s, err := readSnapshot(pid)
	if err != nil {
		return nil, err
	}
	out := make(map[int]uint64, len(s))
	for tid, st := range s {
		out[tid] = st.RunNs
	}
	return out, nil
}

// delta is what happened between two snapshots: wake-ups and CPU summed over
// threads (a thread born in between counts from zero), and the busiest
// thread's share of the wake-ups.
type delta struct {
	Slices, RunNs uint64
	Threads       int    // threads alive at the end
	Woken         int    // threads that ran at all
	TopSlices     uint64 // the most one thread ran
}

func diff(before, after snapshot) delta {
	var d delta
	d.Threads = len(after)
	for tid, a := range after {
		b := before[tid]
		if a.Slices < b.Slices || a.RunNs < b.RunNs { // tid reused by a new thread
			b = threadStat{}
		}
		n := a.Slices - b.Slices
		d.Slices += n
		d.RunNs += a.RunNs - b.RunNs
		if n > 0 {
			d.Woken++
		}
		d.TopSlices = max(d.TopSlices, n)
	}
	return d
}
