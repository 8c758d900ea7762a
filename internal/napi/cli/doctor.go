package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/probe"
)

// facts is everything doctor looks at, gathered first (gather, per OS) and
// judged afterwards by judge, which is pure so it can be tested on
// constructed facts.
type facts struct {
	modeName string
	mode     *napi.Mode // nil when no --poll-mode was given or it did not parse
	modeErr  error

	kernel, epoll, napiID, capNetAdmin probe.Result
	uring                              probe.Result // for --engine uring

	familyErr     error // from napi.Dial
	familyVersion uint8
	setAttrs      map[uint16]bool // attribute types napi-set's policy accepts
	setErr        error           // reading that policy failed (napi.ErrUnsupported: no napi-set)
	threadedBusy  threadedBusyFacts

	iface    string // --interface, "" for none
	ifaceErr error
	ifindex  int
	napis    []napi.NAPI // of iface, or of the whole namespace without --interface
	napisErr error
	queues   []napi.Queue
	names    map[uint32]string // ifindex -> name

	pinSpec string
	pin     []int
	pinErr  error
	cpus    map[int]bool // CPUs this process may run on

	irqs map[int]irqAffinity // by IRQ number

	threads  int                    // --threads: the server's -t, 0 = auto
	kthreads map[uint32]irqAffinity // threaded NAPIs' kthread affinity, by NAPI ID
}

type irqAffinity struct {
	cpus []int
	err  error
}

func (e *env) doctor(args []string) int {
	fs := e.flags("doctor")
	iface := fs.StringP("interface", "i", "", "the listen interface to check (default: summarize all)")
	mode := fs.String("poll-mode", "", "the --poll-mode to check: base, deferX, napibusy, fullbusy, suspend0, suspendX, threadedbusy or auto")
	pin := fs.String("pin-cpus", "", "the reactors' --pin-cpus list, e.g. 0-3 or 1,3")
	threads := fs.StringP("threads", "t", "auto", "the server's -t: a number of reactors, or auto (one per NAPI)")
	if code, stop := e.parse(fs, args); stop {
		return code
	}
	f := gather(*iface, *mode, *pin)
	if *threads != "auto" {
		n, err := strconv.Atoi(*threads)
		if err != nil || n < 1 {
			fmt.Fprintf(e.stderr, "doctor: --threads %q: want a positive number or auto\n", *threads)
			return ExitUsage
		}
		f.threads = n
	}
	r := judge(f)
	r.print(e.stdout)
	if r.worst() == FAIL {
		return ExitFail
	}
	return ExitOK
}

// judge turns facts into OK/WARN/FAIL lines. A missing piece is a FAIL only
// when the requested poll mode needs it.
func judge(f facts) *report {
	r := &report{}
	m := f.mode
	needNAPI := m != nil && m.NeedsNAPI()
	busy := m != nil && m.BusyPolls()
	suspend := m != nil && m.Suspends()

	switch {
	case f.modeErr != nil:
		r.add(FAIL, "poll mode", "%v", f.modeErr)
	case m != nil:
		r.add(OK, "poll mode", "%s: %s", m.Name, describeMode(*m))
	}

	if f.kernel.Supported {
		r.add(OK, "kernel", "%s", f.kernel.Sentence)
	} else {
		r.problem(suspend && f.kernel.Err == nil, "kernel", "%s", f.kernel.Sentence)
	}
	if f.epoll.Supported {
		r.add(OK, "EPIOCSPARAMS", "%s", f.epoll.Sentence)
	} else {
		r.problem(busy, "EPIOCSPARAMS", "%s", f.epoll.Sentence)
	}
	if f.uring.Supported {
		r.add(OK, "io_uring", "%s", f.uring.Sentence)
	} else {
		r.add(WARN, "io_uring", "%s", f.uring.Sentence)
	}
	if f.napiID.Supported {
		r.add(OK, "SO_INCOMING_NAPI_ID", "%s", f.napiID.Sentence)
	} else {
		r.problem(false, "SO_INCOMING_NAPI_ID", "%s", f.napiID.Sentence)
	}
	if f.capNetAdmin.Supported {
		r.add(OK, "privileges", "%s", f.capNetAdmin.Sentence)
	} else {
		// Any requested mode writes the knobs (base writes zeros) once there
		// are NAPIs; without them only the busy/defer modes care.
		r.problem(m != nil && (needNAPI || len(f.napis) > 0), "privileges", "%s", f.capNetAdmin.Sentence)
	}

	switch {
	case f.familyErr != nil:
		fix := ""
		if !errors.Is(f.familyErr, napi.ErrFamilyAbsent) {
			fix = "; fix: check that generic netlink works in this namespace"
		}
		r.problem(needNAPI, "netdev family", "%v%s", f.familyErr, fix)
	default:
		r.add(OK, "netdev family", "present (version %d): NAPIs can be listed", f.familyVersion)
		switch {
		case errors.Is(f.setErr, napi.ErrUnsupported):
			r.problem(needNAPI || m != nil, "napi-set", "the kernel has no napi-set: per-NAPI knobs cannot be set; fix: kernel 6.13+")
		case f.setErr != nil:
			r.problem(needNAPI, "napi-set", "cannot read napi-set's policy: %v", f.setErr)
		default:
			r.add(OK, "napi-set", "accepts defer-hard-irqs, gro-flush-timeout")
			if f.setAttrs[napi.AttrIRQSuspendTimeout] {
				r.add(OK, "irq-suspend-timeout", "napi-set accepts it")
			} else {
				r.problem(suspend, "irq-suspend-timeout", "napi-set does not accept it; fix: kernel 6.13+ (or a mode without suspend)")
			}
		}
		judgeThreadedBusy(r, f.threadedBusy, m != nil && m.ThreadedBusyPoll)
	}

	judgePin(r, f)
	if f.familyErr == nil {
		judgeInterface(r, f, needNAPI)
	}
	return r
}

func describeMode(m napi.Mode) string {
	timeout := "block"
	if m.EpollTimeoutMs >= 0 {
		timeout = fmt.Sprintf("%d ms", m.EpollTimeoutMs)
	}
	s := fmt.Sprintf("defer-hard-irqs %d, gro-flush-timeout %d ns, irq-suspend-timeout %d ns, busy_poll_usecs %d, budget %d, prefer_busy_poll %v, epoll timeout %s",
		m.DeferHardIRQs, m.GROFlushTimeoutNs, m.IRQSuspendTimeoutNs, m.BusyPollUsecs, m.BusyPollBudget, m.PreferBusyPoll, timeout)
	if m.ThreadedBusyPoll {
		s += ", threaded busy-poll"
	}
	return s
}

func judgePin(r *report, f facts) {
	if f.pinSpec == "" {
		return
	}
	if f.pinErr != nil {
		r.add(FAIL, "pin-cpus", "%q: %v", f.pinSpec, f.pinErr)
		return
	}
	var bad []string
	for _, c := range f.pin {
		if f.cpus != nil && !f.cpus[c] {
			bad = append(bad, fmt.Sprint(c))
		}
	}
	if len(bad) > 0 {
		r.add(FAIL, "pin-cpus", "CPU %s not available to this process; fix: choose from %s", strings.Join(bad, ","), cpuList(keys(f.cpus)))
		return
	}
	var each []string
	for i, c := range f.pin {
		each = append(each, fmt.Sprintf("reactor %d on CPU %d", i, c))
	}
	r.add(OK, "pin-cpus", "%s", strings.Join(each, ", "))
}

func judgeInterface(r *report, f facts, needNAPI bool) {
	if f.iface == "" {
		if f.napisErr != nil {
			r.problem(needNAPI, "NAPIs", "%v", f.napisErr)
			return
		}
		per := map[string]int{}
		for _, n := range f.napis {
			per[orDash(f.names[n.Ifindex])]++
		}
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(per)) {
			parts = append(parts, fmt.Sprintf("%s %d", name, per[name]))
		}
		summary := "none in this network namespace"
		if len(parts) > 0 {
			summary = strings.Join(parts, ", ")
		}
		r.problem(false, "interface", "none given (NAPIs: %s); fix: pass --interface with the listen interface to check it", summary)
		return
	}
	topic := "interface " + f.iface
	if f.ifaceErr != nil {
		r.add(FAIL, topic, "%v", f.ifaceErr)
		return
	}
	if f.napisErr != nil {
		r.problem(needNAPI, topic, "%v", f.napisErr)
		return
	}
	var rx int
	for _, q := range f.queues {
		if q.Type == napi.QueueRX {
			rx++
		}
	}
	if len(f.napis) == 0 {
		r.problem(needNAPI, topic, "no NAPIs (ifindex %d, %d rx queues): poll modes have nothing to act on and gocached runs as base; fix: listen on a NIC address (or the veth testbed), not loopback or a wildcard", f.ifindex, rx)
		return
	}
	r.add(OK, topic, "ifindex %d, %d NAPIs, %d rx queues", f.ifindex, len(f.napis), rx)
	if len(f.pin) > 0 && len(f.pin) < len(f.napis) {
		r.add(WARN, "pin-cpus", "%d CPUs for %d NAPIs: with -t auto the reactors beyond the list run unpinned; fix: list one CPU per NAPI", len(f.pin), len(f.napis))
	}
	judgeReactors(r, f)
	judgeKnobs(r, f)
	judgeIRQs(r, f)
}

func judgeKnobs(r *report, f facts) {
	groups := map[string][]uint32{}
	byString := map[string]napi.Knobs{}
	for _, n := range f.napis {
		s := n.Knobs.String()
		groups[s] = append(groups[s], n.ID)
		byString[s] = n.Knobs
	}
	for _, s := range slices.Sorted(maps.Keys(groups)) {
		ids := groups[s]
		what := fmt.Sprintf("NAPIs %v", ids)
		if len(ids) == len(f.napis) {
			what = fmt.Sprintf("all %d NAPIs", len(ids))
		}
		note := ""
		if f.mode != nil {
			if holds(byString[s], f.mode.Knobs()) {
				note = " (already what " + f.mode.Name + " sets)"
			} else {
				note = " (" + f.mode.Name + " will change them and restore these on exit)"
			}
		}
		r.add(OK, "knobs", "%s: %s%s", what, s, note)
	}
}

// holds reports whether cur already has every value want sets (a kernel
// that reports threaded shows it even where the mode leaves it alone).
func holds(cur, want napi.Knobs) bool { return cur.Override(want).String() == cur.String() }

func judgeIRQs(r *report, f facts) {
	pinSet := map[int]bool{}
	for _, c := range f.pin {
		pinSet[c] = true
	}
	napis := slices.Clone(f.napis)
	slices.SortFunc(napis, func(a, b napi.NAPI) int { return int(a.ID) - int(b.ID) })
	var noIRQ []uint32
	for i, n := range napis {
		if n.IRQ < 0 {
			noIRQ = append(noIRQ, n.ID)
			continue
		}
		topic := fmt.Sprintf("napi %d irq %d", n.ID, n.IRQ)
		aff, ok := f.irqs[n.IRQ]
		if !ok || aff.err != nil {
			r.add(WARN, topic, "cannot read /proc/irq/%d/smp_affinity_list: %v", n.IRQ, aff.err)
			continue
		}
		suggest := "a reactor's CPU"
		if len(f.pin) > 0 {
			suggest = fmt.Sprint(f.pin[i%len(f.pin)])
		}
		fix := fmt.Sprintf("fix: echo %s > /proc/irq/%d/smp_affinity_list (and keep irqbalance off it)", suggest, n.IRQ)
		switch {
		case len(f.pin) == 0 && len(aff.cpus) == 1:
			r.add(OK, topic, "on CPU %d; pass --pin-cpus to check it against the reactors", aff.cpus[0])
		case len(f.pin) == 0:
			r.add(WARN, topic, "may fire on CPUs %s: the IRQ should be pinned to the one CPU of the reactor serving the NAPI; %s", cpuList(aff.cpus), fix)
		case len(aff.cpus) == 1 && pinSet[aff.cpus[0]]:
			r.add(OK, topic, "on CPU %d, one of --pin-cpus", aff.cpus[0])
		default:
			r.add(WARN, topic, "may fire on CPUs %s, not a single CPU of --pin-cpus %s: its softirq work lands away from the reactor; %s", cpuList(aff.cpus), cpuList(f.pin), fix)
		}
	}
	if len(noIRQ) > 0 {
		r.add(OK, "irq affinity", "NAPIs %v have no hardware IRQ (virtual device): nothing to pin", noIRQ)
	}
}

func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "(none)"
	}
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}

func keys(m map[int]bool) []int { return slices.Sorted(maps.Keys(m)) }
