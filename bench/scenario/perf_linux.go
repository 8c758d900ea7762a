package scenario

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hwCounters counts cycles and instructions of every thread of a process
// through perf_event_open. Machines without hardware counters (most VMs,
// this one included) make openHWCounters fail, and reports say n/a.
type hwCounters struct {
	cycles, instructions []int // one fd per thread
}

func openHW(tid int, config uint64) (int, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_HARDWARE,
		Config: config,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
	}
	return unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

// HWCountersAvailable reports whether this machine counts cycles, with
// the reason when it does not.
func HWCountersAvailable() error {
	fd, err := openHW(0, unix.PERF_COUNT_HW_CPU_CYCLES)
	if err != nil {
		return fmt.Errorf("perf_event_open cycles: %w", err)
	}
	unix.Close(fd)
	return nil
}

// openHWCounters attaches counters to every current thread of pid (the
// servers start their threads up front, before any measurement).
func openHWCounters(pid int) (*hwCounters, error) {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, err
	}
	h := &hwCounters{}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		c, err := openHW(tid, unix.PERF_COUNT_HW_CPU_CYCLES)
		if err != nil {
			h.close()
			return nil, fmt.Errorf("perf cycles of thread %d: %w", tid, err)
		}
		h.cycles = append(h.cycles, c)
		i, err := openHW(tid, unix.PERF_COUNT_HW_INSTRUCTIONS)
		if err != nil {
			h.close()
			return nil, fmt.Errorf("perf instructions of thread %d: %w", tid, err)
		}
		h.instructions = append(h.instructions, i)
	}
	return h, nil
}

func sumCounters(fds []int) (uint64, error) {
	var total uint64
	var buf [8]byte
	for _, fd := range fds {
		if n, err := unix.Read(fd, buf[:]); err != nil || n != 8 {
			return 0, fmt.Errorf("reading a perf counter: %v (%d bytes)", err, n)
		}
		total += binary.NativeEndian.Uint64(buf[:])
	}
	return total, nil
}

// read returns the cycles and instructions counted since opening.
func (h *hwCounters) read() (cycles, instructions uint64, err error) {
	if cycles, err = sumCounters(h.cycles); err != nil {
		return 0, 0, err
	}
	instructions, err = sumCounters(h.instructions)
	return cycles, instructions, err
}

func (h *hwCounters) close() {
	for _, fd := range append(h.cycles, h.instructions...) {
		unix.Close(fd)
	}
}
