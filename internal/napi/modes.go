package napi

import (
	"fmt"
	"strconv"
	"strings"
)

// Why each knob matters (the README can quote this):
//
//   - defer-hard-irqs N: after a NAPI poll finds no work, keep the device
//     IRQ masked for up to N more empty polls, driven by the
//     gro-flush-timeout timer instead of interrupts. Without it every packet
//     may raise a hard IRQ and a softirq, which is the cost IRQ suspension
//     removes.
//   - gro-flush-timeout: the deferral timer. Keep it as small as possible
//     but larger than the time to serve one request: too short and IRQs come
//     back between requests, too long and an idle-ish connection waits for
//     the timer (it is added latency whenever the application is not
//     polling).
//   - irq-suspend-timeout: while the application busy-polls with
//     prefer_busy_poll, IRQs stay suspended for up to this long; it is a
//     safety net, so it must cover one full epoll_wait batch (--max-events
//     requests) plus their processing, or IRQs re-arm in the middle of the
//     application's work. Suspension is driven by epoll busy polling, so it
//     needs prefer_busy_poll and a busy-poll budget on the epoll context;
//     the deferral knobs decide what happens when the application goes idle.
//
// Mode is a --poll-mode preset: the per-NAPI knobs plus the reactors' epoll
// busy-poll parameters, with the values of the upstream IRQ suspension
// evaluation. Zero busy-poll fields mean "leave the epoll context alone".
type Mode struct {
	Name                string
	DeferHardIRQs       uint32
	GROFlushTimeoutNs   uint64
	IRQSuspendTimeoutNs uint64
	BusyPollUsecs       uint32
	BusyPollBudget      uint16
	PreferBusyPoll      bool
	EpollTimeoutMs      int // -1 blocks
	// Adaptive is the auto mode: it starts as base with epoll ready to
	// prefer busy polling, and the server then switches each NAPI between
	// base and IRQ suspension by what its reactor measures.
	Adaptive bool
	// ThreadedBusyPoll has each NAPI's kthread busy-poll it without pause
	// (napi-set threaded=busy-poll, Linux 6.19+): receive work leaves the
	// reactors' threads and epoll is left to block.
	ThreadedBusyPoll bool
}

const (
	// presetDefer is the defer-hard-irqs count every deferring preset uses.
	presetDefer = 100
	// presetSuspendNs is the irq-suspend-timeout of the suspend presets: a
	// safety net that only fires if the application stops polling.
	presetSuspendNs = 20_000_000
	// presetBudget is the epoll busy-poll budget; above 64 needs CAP_NET_ADMIN.
	presetBudget = 64
	// maxModeUsecs bounds the X of deferX/suspendX: a one-second flush
	// timeout is already far beyond any sensible setting.
	maxModeUsecs = 1_000_000
	// threadedBusyGRONs is threadedbusy's gro-flush-timeout, with defer 100:
	// the deferral the threaded busy-poll series was evaluated with
	// (15 µs), in force whenever the kthread stops polling.
	threadedBusyGRONs = 15_000
)

// ModeNames lists the preset spellings, X standing for microseconds.
var ModeNames = []string{"base", "deferX", "napibusy", "fullbusy", "suspend0", "suspendX", "threadedbusy", "auto"}

// ParseMode resolves a --poll-mode name: base, deferX, napibusy, fullbusy,
// suspend0, suspendX, threadedbusy or auto, where X is a gro-flush-timeout
// in microseconds (e.g. defer20, suspend20).
func ParseMode(name string) (Mode, error) {
	m := Mode{Name: name, EpollTimeoutMs: -1}
	switch name {
	case "base":
		return m, nil
	case "napibusy":
		m.DeferHardIRQs, m.GROFlushTimeoutNs = presetDefer, 200_000
		m.BusyPollUsecs, m.BusyPollBudget, m.PreferBusyPoll = 64, presetBudget, true
		return m, nil
	case "fullbusy":
		m.DeferHardIRQs, m.GROFlushTimeoutNs = presetDefer, 5_000_000
		m.BusyPollUsecs, m.BusyPollBudget, m.PreferBusyPoll = 1000, presetBudget, true
		m.EpollTimeoutMs = 1
		return m, nil
	case "suspend0":
		m.IRQSuspendTimeoutNs = presetSuspendNs
		m.BusyPollBudget, m.PreferBusyPoll = presetBudget, true
		return m, nil
	case "threadedbusy":
		// No epoll busy polling: the kthread owns the NAPI while it polls,
		// so a reactor's busy poll would only spin beside it.
		m.DeferHardIRQs, m.GROFlushTimeoutNs, m.ThreadedBusyPoll = presetDefer, threadedBusyGRONs, true
		return m, nil
	case "auto":
		m.BusyPollBudget, m.PreferBusyPoll, m.Adaptive = presetBudget, true, true
		return m, nil
	}
	for _, prefix := range []string{"defer", "suspend"} {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		us, err := modeUsecs(rest)
		if err != nil {
			return Mode{}, fmt.Errorf("poll mode %q: %w", name, err)
		}
		m.DeferHardIRQs, m.GROFlushTimeoutNs = presetDefer, us*1000
		if prefix == "suspend" {
			m.IRQSuspendTimeoutNs = presetSuspendNs
			m.BusyPollBudget, m.PreferBusyPoll = presetBudget, true
		}
		return m, nil
	}
	return Mode{}, fmt.Errorf("unknown poll mode %q (want one of %s, X in µs)", name, strings.Join(ModeNames, ", "))
}

// modeUsecs parses the X of deferX/suspendX: a positive decimal count of
// microseconds (0 would turn deferral off; use base or suspend0 for that).
func modeUsecs(s string) (uint64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("want a number of microseconds after the name, e.g. 20")
	}
	us, err := strconv.ParseUint(s, 10, 64)
	if err != nil || us == 0 || us > maxModeUsecs {
		return 0, fmt.Errorf("microseconds %q out of range 1..%d", s, maxModeUsecs)
	}
	return us, nil
}

// Knobs are the per-NAPI settings of m; every preset sets all three IRQ
// knobs explicitly (base writes zeros) so that no leftover value survives.
// Only threadedbusy writes threaded: the others leave a NAPI's threading
// (a NIC setup choice, or the testbed's) as they found it.
func (m Mode) Knobs() Knobs {
	k := Knobs{
		DeferHardIRQs:     Uint32(m.DeferHardIRQs),
		GROFlushTimeout:   Uint64(m.GROFlushTimeoutNs),
		IRQSuspendTimeout: Uint64(m.IRQSuspendTimeoutNs),
	}
	if m.ThreadedBusyPoll {
		k.Threaded = Uint32(ThreadedBusyPoll)
	}
	return k
}

// BusyPolls reports whether m configures epoll busy polling (EPIOCSPARAMS).
func (m Mode) BusyPolls() bool {
	return m.BusyPollUsecs > 0 || m.BusyPollBudget > 0 || m.PreferBusyPoll
}

// NeedsNAPI reports whether m only makes sense with NAPIs to act on: every
// preset except base changes NAPI behaviour.
func (m Mode) NeedsNAPI() bool {
	return m.Adaptive || m.ThreadedBusyPoll || m.DeferHardIRQs > 0 || m.GROFlushTimeoutNs > 0 || m.IRQSuspendTimeoutNs > 0 || m.BusyPolls()
}

// Suspends reports whether m relies on irq-suspend-timeout (6.13+).
func (m Mode) Suspends() bool { return m.IRQSuspendTimeoutNs > 0 || m.Adaptive }
