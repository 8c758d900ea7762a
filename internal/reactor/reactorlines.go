package reactor

import "strconv"

// WritePollLines appends what every engine's `stats reactors` ends with for
// one reactor (prefix "reactor:N:"): its poll mode, and the per-NAPI knobs
// read back from the kernel now. A reactor that has not learned its NAPI
// yet, or whose NAPI cannot be read, has no knob lines.
func WritePollLines(add func(name, value string), prefix string, ec *EpollConfig, napiID uint32) {
	mode := ec.PollMode
	if mode == "" {
		mode = "none" // gocached leaves the kernel's NAPI knobs alone
	}
	add(prefix+"poll_mode", mode)
	if ec.NAPIKnobs == nil || napiID == 0 {
		return
	}
	deferIRQs, gro, suspend, err := ec.NAPIKnobs(napiID)
	if err != nil {
		return
	}
	add(prefix+"defer_hard_irqs", strconv.FormatUint(uint64(deferIRQs), 10))
	add(prefix+"gro_flush_timeout", strconv.FormatUint(gro, 10))
	add(prefix+"irq_suspend_timeout", strconv.FormatUint(suspend, 10))
}
