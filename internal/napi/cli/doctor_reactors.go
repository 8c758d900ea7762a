package cli

import (
	"fmt"
	"slices"
)

// judgeReactors warns about placements measured to cost throughput: more
// reactors than CPUs (busy-polling reactors sharing a core starve each
// other: on the testbed four reactors on one CPU ran suspend20 at a quarter
// of base), more NAPIs than reactors (a reactor busy-polls one NAPI; the
// others' connections are spread round-robin and wait for their IRQs), and
// threaded NAPI kthreads that may run away from the reactors' CPUs.
func judgeReactors(r *report, f facts) {
	reactors, how := f.threads, fmt.Sprintf("-t %d", f.threads)
	if reactors == 0 {
		reactors, how = len(f.napis), "-t auto (one per NAPI)"
	}
	cpus, where := len(f.cpus), "CPUs this process may run on"
	if len(f.pin) > 0 {
		cpus, where = len(distinct(f.pin)), "CPUs in --pin-cpus"
	}
	switch {
	case cpus > 0 && reactors > cpus:
		r.add(WARN, "reactors", "%s gives %d reactors for %d %s: busy-polling reactors on one CPU take turns instead of polling; fix: -t %d, or as many queues as CPUs (ethtool -L %s combined %d)",
			how, reactors, cpus, where, cpus, f.iface, cpus)
	case len(f.napis) > reactors:
		r.add(WARN, "reactors", "%d NAPIs for %d reactors (%s): connections of NAPIs without their own reactor are placed round-robin and cannot be busy-polled; fix: -t auto, or fewer queues (ethtool -L %s combined %d)",
			len(f.napis), reactors, how, f.iface, reactors)
	default:
		r.add(OK, "reactors", "%d reactors (%s) for %d NAPIs on %d %s", reactors, how, len(f.napis), cpus, where)
	}
	pinned := map[int]bool{}
	for _, c := range f.pin {
		pinned[c] = true
	}
	for _, n := range f.napis {
		aff, ok := f.kthreads[n.ID]
		if n.PID == 0 || !ok {
			continue
		}
		topic := fmt.Sprintf("napi %d kthread %d", n.ID, n.PID)
		switch {
		case aff.err != nil:
			r.add(WARN, topic, "cannot read its CPU affinity: %v", aff.err)
		case len(aff.cpus) != 1:
			r.add(WARN, topic, "threaded NAPI polled on any of CPUs %s: its receive work lands away from the reactor; fix: taskset -pc CPU %d with the reactor's CPU", cpuList(aff.cpus), n.PID)
		case len(f.pin) > 0 && !pinned[aff.cpus[0]]:
			r.add(WARN, topic, "threaded NAPI on CPU %d, not one of --pin-cpus %s; fix: taskset -pc CPU %d with the reactor's CPU", aff.cpus[0], cpuList(f.pin), n.PID)
		default:
			r.add(OK, topic, "threaded NAPI on CPU %d", aff.cpus[0])
		}
	}
}

func distinct(cpus []int) []int {
	s := slices.Clone(cpus)
	slices.Sort(s)
	return slices.Compact(s)
}
