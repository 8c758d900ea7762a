//go:build linux

package testbed

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ParseNetstat reads the /proc/net/netstat (or /proc/net/snmp) format: pairs
// of lines "Section: Name1 Name2 ..." and "Section: v1 v2 ...". Keys are
// "Section:Name", e.g. "TcpExt:BusyPollRxPackets".
func ParseNetstat(r io.Reader) (map[string]uint64, error) {
	out := make(map[string]uint64)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 8<<10), 1<<20)
	for sc.Scan() {
		header := sc.Text()
		if strings.TrimSpace(header) == "" {
			continue
		}
		if !sc.Scan() {
			return nil, fmt.Errorf("netstat: header %.40q without a value line", header)
		}
		values := sc.Text()
		hs, hnames, ok1 := strings.Cut(header, ":")
		vs, vnums, ok2 := strings.Cut(values, ":")
		if !ok1 || !ok2 || hs != vs {
			return nil, fmt.Errorf("netstat: mismatched lines %.40q / %.40q", header, values)
		}
		names, nums := strings.Fields(hnames), strings.Fields(vnums)
		if len(names) != len(nums) {
			return nil, fmt.Errorf("netstat: %s has %d names but %d values", hs, len(names), len(nums))
		}
		for i, n := range names {
			// Some snmp counters (Tcp MaxConn) are signed; keep them as the
			// two's complement the kernel prints rather than failing.
			v, err := strconv.ParseUint(nums[i], 10, 64)
			if err != nil {
				s, serr := strconv.ParseInt(nums[i], 10, 64)
				if serr != nil {
					return nil, fmt.Errorf("netstat: %s:%s = %q: %w", hs, n, nums[i], err)
				}
				v = uint64(s)
			}
			out[hs+":"+n] = v
		}
	}
	return out, sc.Err()
}

// readNetFile reads /proc/thread-self/net/NAME inside ns ("" = the calling
// thread's own namespace). /proc/self/net would follow the thread group
// leader's namespace, not the switched thread's.
func readNetFile(ns, name string) (map[string]uint64, error) {
	var m map[string]uint64
	read := func() error {
		f, err := os.Open("/proc/thread-self/net/" + name)
		if err != nil {
			return err
		}
		defer f.Close()
		m, err = ParseNetstat(f)
		return err
	}
	var err error
	if ns == "" {
		err = read()
	} else {
		err = InNS(ns, read)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s of netns %q: %w", name, ns, err)
	}
	return m, nil
}

// ReadNetstat returns the /proc/net/netstat counters (TcpExt, IpExt, ...) of
// network namespace ns, "" for the caller's own.
func ReadNetstat(ns string) (map[string]uint64, error) { return readNetFile(ns, "netstat") }

// ReadSNMP returns the /proc/net/snmp counters (Ip, Tcp, Udp, ...) of ns.
func ReadSNMP(ns string) (map[string]uint64, error) { return readNetFile(ns, "snmp") }

// BusyPollRxPackets is TcpExt:BusyPollRxPackets of ns: packets that reached
// sockets through busy polling rather than softirq processing.
func BusyPollRxPackets(ns string) (uint64, error) {
	m, err := ReadNetstat(ns)
	if err != nil {
		return 0, err
	}
	v, ok := m["TcpExt:BusyPollRxPackets"]
	if !ok {
		return 0, fmt.Errorf("netns %q: no TcpExt:BusyPollRxPackets (kernel without CONFIG_NET_RX_BUSY_POLL?)", ns)
	}
	return v, nil
}

// ParseSoftirqs reads the /proc/softirqs format: a header of CPU names, then
// one line per softirq ("NET_RX: 12 34"). It returns counts per CPU, in the
// header's order, keyed by softirq name.
func ParseSoftirqs(r io.Reader) (map[string][]uint64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 8<<10), 1<<20)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("softirqs: empty")
	}
	cpus := len(strings.Fields(sc.Text()))
	if cpus == 0 {
		return nil, fmt.Errorf("softirqs: header names no CPUs")
	}
	out := make(map[string][]uint64)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			return nil, fmt.Errorf("softirqs: bad line %.40q", sc.Text())
		}
		fields := strings.Fields(rest)
		if len(fields) != cpus {
			return nil, fmt.Errorf("softirqs: %s has %d counts for %d CPUs", name, len(fields), cpus)
		}
		counts := make([]uint64, cpus)
		for i, f := range fields {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("softirqs: %s: %w", name, err)
			}
			counts[i] = v
		}
		out[name] = counts
	}
	return out, sc.Err()
}

// ReadSoftirqs parses /proc/softirqs. Softirq counts are per CPU and global,
// not per namespace.
func ReadSoftirqs() (map[string][]uint64, error) {
	f, err := os.Open("/proc/softirqs")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSoftirqs(f)
}

// NetRxSoftirqs returns the NET_RX softirq count of every CPU.
func NetRxSoftirqs() ([]uint64, error) {
	m, err := ReadSoftirqs()
	if err != nil {
		return nil, err
	}
	v, ok := m["NET_RX"]
	if !ok {
		return nil, fmt.Errorf("/proc/softirqs has no NET_RX line")
	}
	return v, nil
}
