package testproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory is a process's resident set size in bytes, from /proc/PID/status.
type Memory struct {
	Peak    int64 // VmHWM: the high-water mark since the process started
	Current int64 // VmRSS
}

// ReadMemory reads the memory of process pid (Linux only).
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("memory of pid %d: %w", pid, err)
	}
	m, err := ParseStatus(b)
	if err != nil {
		return Memory{}, fmt.Errorf("memory of pid %d: %w", pid, err)
	}
	return m, nil
}

// ParseStatus reads VmHWM and VmRSS of a /proc/PID/status file. Both must
// be present: a zombie or kernel thread has neither, and a zero would read
// as "uses no memory".
func ParseStatus(b []byte) (Memory, error) {
	var m Memory
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		var dst *int64
		switch f[0] {
		case "VmHWM:":
			dst = &m.Peak
		case "VmRSS:":
			dst = &m.Current
		default:
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("status %s: %w", f[0], err)
		}
		*dst = kb << 10
		seen++
	}
	if err := sc.Err(); err != nil {
		return Memory{}, err
	}
	if seen != 2 {
		return Memory{}, fmt.Errorf("status: VmHWM and VmRSS not both present")
	}
	return m, nil
}
