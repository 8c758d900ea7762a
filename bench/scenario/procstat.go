//go:build linux

// Package scenario runs the IRQ-suspension evaluation matrix: a server under
// test (gocached or Debian memcached) in the testbed's server namespace, the
// mcload generator in the client namespace, one run per scenario and load,
// with the server's CPU cost and the kernel's polling counters per query.
package scenario

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// userHZ is the unit of /proc CPU times: USER_HZ is 100 on every Linux ABI
// Go supports.
const userHZ = 100

// ParseProcStat returns utime+stime of a /proc/PID/stat line, in clock
// ticks. For a thread-group leader these cover all of the process's threads.
func ParseProcStat(b []byte) (ticks uint64, err error) {
	u, s, err := ParseProcTimes(b)
	return u + s, err
}

// ParseProcTimes returns utime and stime of a /proc/PID/stat line apart, in
// clock ticks, for reports that split user-space from kernel cost.
func ParseProcTimes(b []byte) (utime, stime uint64, err error) {
	// comm (field 2) may hold spaces and parentheses: fields resume after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("proc stat: no ')' in %.60q", b)
	}
	f := strings.Fields(string(b[i+1:]))
	// After comm come state (field 3) ... utime (14) and stime (15).
	const ut = 14 - 3
	if len(f) <= ut+1 {
		return 0, 0, fmt.Errorf("proc stat: %d fields after comm, want more than %d", len(f), ut+1)
	}
	if utime, err = strconv.ParseUint(f[ut], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("proc stat utime: %w", err)
	}
	if stime, err = strconv.ParseUint(f[ut+1], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("proc stat stime: %w", err)
	}
	return utime, stime, nil
}

// ProcessCPU is utime+stime of process pid, in clock ticks.
func ProcessCPU(pid int) (uint64, error) {
	u, s, err := ProcessTimes(pid)
	return u + s, err
}

// ProcessTimes is utime and stime of process pid, in clock ticks.
func ProcessTimes(pid int) (utime, stime uint64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	return ParseProcTimes(b)
}

// UserHZ is the unit of the tick counts above, per second.
const UserHZ = userHZ

// SystemCPU is the aggregate "cpu" line of /proc/stat, in clock ticks.
type SystemCPU struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Busy is every tick not idle, not waiting and not stolen.
func (c SystemCPU) Busy() uint64 { return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ }

// Total is every tick.
func (c SystemCPU) Total() uint64 { return c.Busy() + c.Idle + c.IOWait + c.Steal }

// Sub is c - o, the ticks of an interval.
func (c SystemCPU) Sub(o SystemCPU) SystemCPU {
	return SystemCPU{c.User - o.User, c.Nice - o.Nice, c.System - o.System, c.Idle - o.Idle,
		c.IOWait - o.IOWait, c.IRQ - o.IRQ, c.SoftIRQ - o.SoftIRQ, c.Steal - o.Steal}
}

// ParseSystemCPU reads the "cpu " line of /proc/stat. Guest time is already
// part of user time there, so it is not added again.
func ParseSystemCPU(r io.Reader) (SystemCPU, error) {
	all, _, err := ParseCPUs(r)
	return all, err
}

// ParseCPUs reads the aggregate "cpu" line and every "cpuN" line of
// /proc/stat; per-CPU lines tell which core of a pinned benchmark ran out
// of idle time.
func ParseCPUs(r io.Reader) (all SystemCPU, per map[int]SystemCPU, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 8<<10), 1<<20)
	seen := false
	per = map[int]SystemCPU{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if len(f) < 9 {
			return all, nil, fmt.Errorf("/proc/stat: %s line has %d fields, want at least 9", f[0], len(f))
		}
		var v [8]uint64
		for i := range v {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return all, nil, fmt.Errorf("/proc/stat %s field %d: %w", f[0], i+1, err)
			}
			v[i] = n
		}
		c := SystemCPU{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
		if f[0] == "cpu" {
			all, seen = c, true
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || n < 0 {
			return all, nil, fmt.Errorf("/proc/stat: bad cpu name %q", f[0])
		}
		per[n] = c
	}
	if err := sc.Err(); err != nil {
		return all, nil, err
	}
	if !seen {
		return all, nil, fmt.Errorf("/proc/stat: no cpu line")
	}
	return all, per, nil
}

// ReadSystemCPU parses /proc/stat.
func ReadSystemCPU() (SystemCPU, error) {
	all, _, err := ReadCPUs()
	return all, err
}

// ReadCPUs parses /proc/stat, aggregate and per CPU.
func ReadCPUs() (SystemCPU, map[int]SystemCPU, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return SystemCPU{}, nil, err
	}
	defer f.Close()
	return ParseCPUs(f)
}
