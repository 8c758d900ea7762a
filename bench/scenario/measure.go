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
	system    SystemCPU
	perCPU    map[int]SystemCPU
	busyPoll  uint64 // TcpExt:BusyPollRxPackets of the server namespace
	netRx     uint64 // NET_RX softirqs, all CPUs
	reactors  map[string]uint64
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
	for _, k := range []struct {
		pids []int
		sum  *uint64
	}{{kthreads, &c.kthreads}, {clientKthreads, &c.cliKthr}} {
		for _, pid := range k.pids {
			t, err := ProcessCPU(pid)
			if err != nil {
				return c, fmt.Errorf("napi kthread %d cpu: %w", pid, err)
			}
			*k.sum += t
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
	ServerCPUPct     float64 `json:"server_cpu_pct"`  // of one CPU
	ClientCPUPct     float64 `json:"client_cpu_pct"`  // of one CPU
	KthreadCPUPct    float64 `json:"kthread_cpu_pct"` // of one CPU: the server end's NAPI kthreads
	CliKthreadCPUPct float64 `json:"client_kthread_cpu_pct"`
	MachineCPUPct    float64 `json:"machine_cpu_pct"` // of one CPU: every busy tick of every CPU
	// BenchCPUPct is MachineCPUPct without other tenants' processes: server,
	// client, both ends' NAPI kthreads and all interrupt time. On a shared
	// machine it is the whole-machine cost of the benchmark itself.
	BenchCPUPct      float64 `json:"bench_cpu_pct"`
	ServerCoreBusy   float64 `json:"server_core_busy_pct"`
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
	ticks := func(t uint64) float64 { return float64(t) / userHZ }
	d := b.system.Sub(a.system)
	total := float64(d.Total())
	u := Usage{
		Seconds:          secs,
		ServerCPUPct:     100 * ticks(b.serverCPU-a.serverCPU) / secs,
		ClientCPUPct:     100 * ticks(b.clientCPU-a.clientCPU) / secs,
		KthreadCPUPct:    100 * ticks(b.kthreads-a.kthreads) / secs,
		CliKthreadCPUPct: 100 * ticks(b.cliKthr-a.cliKthr) / secs,
		MachineCPUPct:    100 * ticks(d.Busy()) / secs,
		BusyPollPerSec:   float64(b.busyPoll-a.busyPoll) / secs,
		NetRxPerSec:      float64(b.netRx-a.netRx) / secs,
	}
	per := map[int]SystemCPU{}
	for c, v := range b.perCPU {
		if o, ok := a.perCPU[c]; ok {
			per[c] = v.Sub(o)
		}
	}
	u.ServerCoreBusy = coreBusyPct(per, serverCPUs)
	u.ClientCoreBusy = coreBusyPct(per, clientCPUs)
	if total > 0 {
		u.StealPct = 100 * float64(d.Steal) / total
		process := float64(d.User + d.Nice + d.System)
		// Both ends' NAPI kthreads are the benchmark's own receive work.
		own := b.serverCPU - a.serverCPU + b.clientCPU - a.clientCPU + b.kthreads - a.kthreads + b.cliKthr - a.cliKthr
		other := process - float64(own)
		u.OtherCPUPct = max(0, 100*other/total)
		u.BenchCPUPct = 100 * ticks(d.Busy()-uint64(max(0, other))) / secs
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
