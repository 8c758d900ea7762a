//go:build linux

package testbed

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/gocached/gocached/internal/cpuset"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Variant selects how the bed is built. The zero value is the classic bed:
// Queues (4) queues per end, NAPIs polled in softirq context.
//
// The two receive models matter for what a benchmark measures. In the plain
// bed veth's sender raises the NET_RX softirq for the peer's NAPI on the
// sender's own CPU, so the server's receive work runs on the client's core:
// the server core looks idler than it would behind a NIC, and a deferral
// timer or suspension on the server side cannot move that work. Threaded
// NAPI gives every NAPI a kthread (napi/DEV-ID); pinning the server end's
// kthreads to the server CPUs puts receive processing on the receiver's
// core, as a NIC whose IRQ is affined to the server core would.
type Variant struct {
	Queues     int    // rx and tx queues per end; 0 = Queues
	Threaded   bool   // threaded NAPI on both ends, kthreads pinned per side
	ServerCPUs string // CPU list for the server end's NAPI kthreads ("" = leave them unpinned)
	ClientCPUs string // likewise for the client end
}

// maxQueues bounds Queues: veth accepts more, but a bed with more queues
// than CPUs has no use and each one costs a NAPI (and a kthread).
const maxQueues = 64

func (v Variant) withDefaults() (Variant, error) {
	if v.Queues == 0 {
		v.Queues = Queues
	}
	if v.Queues < 1 || v.Queues > maxQueues {
		return v, fmt.Errorf("testbed: %d queues, want 1..%d", v.Queues, maxQueues)
	}
	for _, l := range []string{v.ServerCPUs, v.ClientCPUs} {
		if l == "" {
			continue
		}
		if _, err := cpuset.Parse(l); err != nil {
			return v, fmt.Errorf("testbed: cpu list %q: %w", l, err)
		}
	}
	return v, nil
}

// String names the variant the way reports and testbed.sh do: "plain-1q",
// "threaded-1q".
func (v Variant) String() string {
	kind := "plain"
	if v.Threaded {
		kind = "threaded"
	}
	q := v.Queues
	if q == 0 {
		q = Queues
	}
	return fmt.Sprintf("%s-%dq", kind, q)
}

// applyThreading writes the threaded state of both ends explicitly (a
// rebuilt bed may have had the other one) and pins the kthreads.
func (b *Bed) applyThreading() error {
	val := "0"
	if b.Variant.Threaded {
		val = "1"
	}
	ends := []struct {
		ns, dev string
		ifindex int
		cpus    string
		pids    *[]int
	}{
		{b.ServerNS, b.ServerDev, b.ServerIfindex, b.Variant.ServerCPUs, &b.ServerKthreads},
		{b.ClientNS, b.ClientDev, b.ClientIfindex, b.Variant.ClientCPUs, &b.ClientKthreads},
	}
	for _, e := range ends {
		// ip netns exec mounts the namespace's own sysfs, where DEV lives.
		if err := run("ip", "netns", "exec", e.ns, "sh", "-c",
			"echo "+val+" > /sys/class/net/"+e.dev+"/threaded"); err != nil {
			return err
		}
		if !b.Variant.Threaded {
			*e.pids = nil
			continue
		}
		pids, err := napiThreadPIDs(e.ns, e.ifindex)
		if err != nil {
			return err
		}
		if len(pids) != b.Variant.Queues {
			return fmt.Errorf("%s in %s: %d NAPI kthreads, want %d", e.dev, e.ns, len(pids), b.Variant.Queues)
		}
		*e.pids = pids
		if e.cpus == "" {
			continue
		}
		if err := PinPIDs(pids, e.cpus); err != nil {
			return fmt.Errorf("pinning %s's NAPI kthreads: %w", e.dev, err)
		}
	}
	return nil
}

// PinPIDs sets the CPU affinity of every pid (threads or kthreads) to list.
func PinPIDs(pids []int, list string) error {
	cpus, err := cpuset.Parse(list)
	if err != nil {
		return err
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	var errs []error
	for _, pid := range pids {
		if err := unix.SchedSetaffinity(pid, &set); err != nil {
			errs = append(errs, fmt.Errorf("pid %d: %w", pid, err))
		}
	}
	return errors.Join(errs...)
}

// Affinity is the CPU list pid may run on.
func Affinity(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, err
	}
	var out []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// The few numbers of the netdev generic netlink family this file needs
// (Documentation/netlink/specs/netdev.yaml). internal/napi has the full
// client, but its tests import this package, so it cannot be imported here.
const (
	cmdNAPIGet      = 11
	attrNAPIIfindex = 1
	attrNAPIID      = 2
	attrNAPIPID     = 4
)

// napiThreadPIDs returns the kthread pid of every NAPI of ifindex in ns
// (napi-get dump). Kthread names (napi/DEV-ID) are not enough to find
// them: every bed names its devices srv0 and cli0.
func napiThreadPIDs(ns string, ifindex int) ([]int, error) {
	fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	conn, err := genetlink.Dial(&netlink.Config{NetNS: fd})
	if err != nil {
		return nil, fmt.Errorf("generic netlink in %s: %w", ns, err)
	}
	defer conn.Close()
	fam, err := conn.GetFamily("netdev")
	if err != nil {
		return nil, fmt.Errorf("netdev family: %w", err)
	}
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrNAPIIfindex, uint32(ifindex))
	data, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := conn.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmdNAPIGet, Version: fam.Version}, Data: data,
	}, fam.ID, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, fmt.Errorf("napi-get dump in %s: %w", ns, err)
	}
	var pids []int
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, err
		}
		var pid uint32
		for ad.Next() {
			if ad.Type() == attrNAPIPID {
				pid = ad.Uint32()
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
		if pid == 0 {
			return nil, fmt.Errorf("napi-get in %s: a NAPI of ifindex %d has no kthread", ns, ifindex)
		}
		pids = append(pids, int(pid))
	}
	return pids, nil
}

// KthreadName is the comm of pid, e.g. "napi/srv0-426".
func KthreadName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ThreadedState reads /sys/class/net/DEV/threaded inside ns ("1" or "0").
func ThreadedState(ns, dev string) (string, error) {
	out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/sys/class/net/"+dev+"/threaded").Output()
	if err != nil {
		return "", fmt.Errorf("reading threaded of %s in %s: %w", dev, ns, err)
	}
	return strings.TrimSpace(string(out)), nil
}
