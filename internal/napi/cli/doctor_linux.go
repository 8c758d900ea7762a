package cli

import (
	"github.com/gocached/gocached/internal/cpuset"
	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/probe"
	"golang.org/x/sys/unix"
)

// gather runs every probe doctor reports on, in the caller's network
// namespace.
func gather(iface, mode, pin string) facts {
	f := facts{modeName: mode, iface: iface, pinSpec: pin}
	if mode != "" {
		m, err := napi.ParseMode(mode)
		if err != nil {
			f.modeErr = err
		} else {
			f.mode = &m
		}
	}
	f.kernel = probe.KernelVersion()
	f.epoll = probe.EpollParamsSupported()
	f.uring = probe.IOURing()
	f.napiID = probe.IncomingNAPIIDSupported()
	f.capNetAdmin = probe.HasCapNetAdmin()

	if pin != "" {
		f.pin, f.pinErr = cpuset.Parse(pin)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		f.cpus = map[int]bool{}
		for c := range 1024 {
			if set.IsSet(c) {
				f.cpus[c] = true
			}
		}
	}

	ifindex := 0
	if iface != "" {
		ifi, err := lookupInterface(iface)
		if err != nil {
			f.ifaceErr = err
		} else {
			ifindex, f.ifindex = ifi.Index, ifi.Index
		}
	}
	c, err := napi.Dial()
	if err != nil {
		f.familyErr = err
		return f
	}
	defer c.Close()
	f.familyVersion = c.FamilyVersion()
	f.setAttrs, f.setErr = c.SetPolicyAttrs()
	f.threadedBusy.policyOK, f.threadedBusy.policyErr = c.SupportsThreadedBusyPoll()
	if f.ifaceErr != nil {
		return f
	}
	f.names = ifaceNames()
	f.napis, f.napisErr = c.NAPIs(ifindex)
	if f.napisErr == nil {
		f.queues, f.napisErr = c.Queues(ifindex)
	}
	if f.napisErr == nil && len(f.napis) > 0 {
		f.threadedBusy.probe(c, f.napis[0].ID)
	}
	f.irqs = map[int]irqAffinity{}
	f.kthreads = map[uint32]irqAffinity{}
	for _, n := range f.napis {
		if n.IRQ >= 0 {
			cpus, err := probe.IRQAffinity(n.IRQ)
			f.irqs[n.IRQ] = irqAffinity{cpus: cpus, err: err}
		}
		if n.PID > 0 {
			cpus, err := threadAffinity(int(n.PID))
			f.kthreads[n.ID] = irqAffinity{cpus: cpus, err: err}
		}
	}
	return f
}

// threadAffinity is the CPUs a task may run on (a threaded NAPI's kthread).
func threadAffinity(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
