//go:build linux

package scenario

import (
	"fmt"
	"time"

	"github.com/gocached/gocached/kernel/testbed"
)

// counters is one reading of everything a run reports per query.
type counters struct {
	at        time.Time
	serverCPU uint64 // ticks, all server threads
	clientCPU uint64 // ticks, the load generator
	kthreads  uint64 // ticks, the server end's NAPI kthreads (threaded beds)
	cliKthr   uint64 // ticks, the client end's NAPI kthreads
	// The same four as exact run time in ns (see runtime.go for why both).
	serverNs, clientNs, kthreadNs, cliKthrNs uint64
	system                                   SystemCPU
	perCPU                                   map[int]SystemCPU
	busyPoll                                 uint64 // TcpExt:BusyPollRxPackets of the server namespace
	netRx                                    uint64 // NET_RX softirqs, all CPUs
	reactors                                 map[string]uint64
}

func readCounters(serverNS string, serverPID, clientPID int, kthreads, clientKthreads []int) (counters, error) {
	c := counters{at: time.Now()}
	var err error
	if c.serverCPU, err = ProcessCPU(serverPID); err != nil {
		return c, fmt.Errorf("server cpu: %w", err)
	}
	if c.clientCPU, err = ProcessCPU(clientPID); err != nil {
		return c, fmt.Errorf("client cpu: %w", err)
	}
	if c.serverNs, err = RuntimeNs(serverPID); err != nil {
		return c, fmt.Errorf("server run time: %w", err)
	}
	if c.clientNs, err = RuntimeNs(clientPID); err != nil {
		return c, fmt.Errorf("client run time: %w", err)
	}
	for _, k := range []struct {
		pids    []int
		sum, ns *uint64
	}{{kthreads, &c.kthreads, &c.kthreadNs}, {clientKthreads, &c.cliKthr, &c.cliKthrNs}} {
		for _, pid := range k.pids {
			t, err := ProcessCPU(pid)
			if err != nil {
				return c, fmt.Errorf("napi kthread %d cpu: %w", pid, err)
			}
			*k.sum += t
			ns, err := RuntimeNs(pid)
			if err != nil {
				return c, fmt.Errorf("napi kthread %d run time: %w", pid, err)
			}
			*k.ns += ns
		}
	}
	if c.system, c.perCPU, err = ReadCPUs(); err != nil {
		return c, err
	}
	if c.busyPoll, err = testbed.BusyPollRxPackets(serverNS); err != nil {
		return c, err
	}
	rx, err := testbed.NetRxSoftirqs()
	if err != nil {
		return c, err
	}
	for _, v := range rx {
		c.netRx += v
	}
	return c, nil
}

// Usage is what the counters say about one measured interval. Percentages
// "of one CPU" can reach 100 × CPUs; "of the machine" reach 100.
type Usage struct {
	Seconds          float64 `json:"seconds"`
	ServerCPUPct     float64 `json:"server_cpu_pct"`  // of one CPU, exact run time
	ClientCPUPct     float64 `json:"client_cpu_pct"`  // of one CPU
	KthreadCPUPct    float64 `json:"kthread_cpu_pct"` // of one CPU: the server end's NAPI kthreads
	CliKthreadCPUPct float64 `json:"client_kthread_cpu_pct"`
	MachineCPUPct    float64 `json:"machine_cpu_pct"` // of one CPU: every busy tick of every CPU
	// BenchCPUPct is MachineCPUPct without other tenants' processes: server,
	// client, both ends' NAPI kthreads and all interrupt time. On a shared
	// machine it is the whole-machine cost of the benchmark itself.
	BenchCPUPct    float64 `json:"bench_cpu_pct"`
	ServerCoreBusy float64 `json:"server_core_busy_pct"` // of the cores' time not stolen
	// ServerCoreCPUPct is the server cores' busy time in % of one CPU: the
	// server, its NAPI kthreads and the interrupt work on those cores.
	ServerCoreCPUPct float64 `json:"server_core_cpu_pct"`
	ClientCoreBusy   float64 `json:"client_core_busy_pct"`
	StealPct         float64 `json:"steal_pct"`     // of the machine
	OtherCPUPct      float64 `json:"other_cpu_pct"` // of the machine: process time of neither server nor client
	IRQCPUPct        float64 `json:"irq_cpu_pct"`   // of the machine: hard and soft interrupt time
	BusyPollPerSec   float64 `json:"busy_poll_per_sec"`
	NetRxPerSec      float64 `json:"net_rx_per_sec"`
	CyclesPerSec     float64 `json:"cycles_per_sec,omitempty"`
	InstructionsPSec float64 `json:"instructions_per_sec,omitempty"`
	// Reactor counter deltas of gocached's `stats reactors`, summed over
	// reactors (epoll_waits, events); empty for memcached.
	Reactors map[string]uint64 `json:"reactors,omitempty"`
}

// usage turns two readings into rates. serverCPUs and clientCPUs are the
// cores each side is pinned to (for the busy shares). Interrupt time (much
// of it network processing for the server and the client) is reported on
// its own, not as "other", so that only foreign processes flag a run as
// disturbed; both ends' NAPI kthread time likewise.
func usage(a, b counters, serverCPUs, clientCPUs []int) Usage {
	secs := b.at.Sub(a.at).Seconds()
	ticks := func(t float64) float64 { return t / userHZ }
	exact := func(ns uint64) float64 { return 100 * float64(ns) / 1e9 / secs }
	wall := secs * userHZ // one core's wall clock, in ticks
	d := b.system.Sub(a.system)
	u := Usage{
		Seconds:          secs,
		ServerCPUPct:     exact(b.serverNs - a.serverNs),
		ClientCPUPct:     exact(b.clientNs - a.clientNs),
		KthreadCPUPct:    exact(b.kthreadNs - a.kthreadNs),
		CliKthreadCPUPct: exact(b.cliKthrNs - a.cliKthrNs),
		BusyPollPerSec:   float64(b.busyPoll-a.busyPoll) / secs,
		NetRxPerSec:      float64(b.netRx-a.netRx) / secs,
	}
	per := map[int]SystemCPU{}
	var machineBusy float64
	for c, v := range b.perCPU {
		if o, ok := a.perCPU[c]; ok {
			per[c] = v.Sub(o)
			machineBusy += wallBusyTicks(per[c], wall)
		}
	}
	if len(per) == 0 { // no per-CPU lines: the aggregate's sampled ticks
		machineBusy = float64(d.Busy())
	}
	u.MachineCPUPct = 100 * ticks(machineBusy) / secs
	u.ServerCoreBusy = coreBusyPct(per, serverCPUs, wall)
	for _, c := range serverCPUs {
		if t, ok := per[c]; ok {
			u.ServerCoreCPUPct += 100 * ticks(wallBusyTicks(t, wall)) / secs
		}
	}
	u.ClientCoreBusy = coreBusyPct(per, clientCPUs, wall)
	if total := float64(d.Total()); total > 0 {
		u.StealPct = 100 * float64(d.Steal) / total
		// Other tenants' processes, for the "disturbed" flag: sampled
		// process ticks less the sampled ticks of the benchmark's own
		// processes and NAPI kthreads (both sides sampled alike).
		process := float64(d.User + d.Nice + d.System)
		own := b.serverCPU - a.serverCPU + b.clientCPU - a.clientCPU + b.kthreads - a.kthreads + b.cliKthr - a.cliKthr
		other := max(0, process-float64(own))
		u.OtherCPUPct = 100 * other / total
		u.BenchCPUPct = 100 * ticks(max(0, machineBusy-other)) / secs
		u.IRQCPUPct = 100 * float64(d.IRQ+d.SoftIRQ) / total
	}
	if a.reactors != nil && b.reactors != nil {
		u.Reactors = map[string]uint64{}
		for k, v := range b.reactors {
			if o, ok := a.reactors[k]; ok && v >= o {
				u.Reactors[k] = v - o
			}
		}
	}
	return u
}
