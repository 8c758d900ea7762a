package config

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/reactor"
)

// NAPI are the NAPI-control flags after parsing: which knobs to write
// on the listen interface's NAPIs, and where to keep the values found before.
type NAPI struct {
	ModeName  string        // --poll-mode as given; "" = none
	Mode      *napi.Mode    // the preset; nil without --poll-mode
	Knobs     napi.Knobs    // preset knobs overridden by explicit knob flags; empty = leave the kernel alone
	Iface     string        // --interface; "" = the interface holding -l
	StatePath string        // --napi-state; "" = napi.DefaultStatePath(interface)
	AutoEvery time.Duration // --poll-auto-interval: how often --poll-mode auto decides

	// plain holds the reactor's epoll settings as the flags alone set them,
	// before the preset, so that a mode with no NAPI to act on can fall back
	// to base while keeping whatever the user set explicitly.
	Plain epollParams
}

// epollParams are the reactor settings a poll mode may change.
type epollParams struct {
	busyPollUsecs  uint32
	busyPollBudget uint16
	preferBusyPoll bool
	epollTimeoutMs int
}

func epollParamsOf(rc *reactor.Config) epollParams {
	return epollParams{rc.Epoll.BusyPollUsecs, rc.Epoll.BusyPollBudget, rc.Epoll.PreferBusyPoll, rc.Epoll.TimeoutMs}
}

func (p epollParams) into(rc *reactor.Config) {
	rc.Epoll.BusyPollUsecs, rc.Epoll.BusyPollBudget, rc.Epoll.PreferBusyPoll, rc.Epoll.TimeoutMs = p.busyPollUsecs, p.busyPollBudget, p.preferBusyPoll, p.epollTimeoutMs
}

// pollModeCustom names the mode in `stats reactors` when only explicit knob
// flags were given.
const pollModeCustom = "custom"

// napiFlags holds the raw values until resolve runs.
type napiFlags struct {
	mode                 string
	deferHardIRQs        uint32
	groFlush, irqSuspend uint64
	out                  *NAPI
}

func addNAPIFlags(fs *pflag.FlagSet, o *NAPI) *napiFlags {
	f := &napiFlags{out: o}
	fs.StringVar(&f.mode, "poll-mode", "", "NAPI poll-mode preset: base, deferX, napibusy, fullbusy, suspend0, suspendX (X in µs), threadedbusy (kernel 6.19+), or auto (each NAPI switched between base and IRQ suspension by what its reactor measures); default: leave the kernel's knobs alone")
	fs.DurationVar(&o.AutoEvery, "poll-auto-interval", time.Second, "how often --poll-mode auto looks at the reactors and decides")
	fs.StringVar(&o.Iface, "interface", "", "interface whose NAPIs --poll-mode tunes (default: the one holding the -l address)")
	fs.Uint32Var(&f.deferHardIRQs, "defer-hard-irqs", 0, "per-NAPI defer-hard-irqs; overrides the preset")
	fs.Uint64Var(&f.groFlush, "gro-flush-timeout", 0, "per-NAPI gro-flush-timeout in ns; overrides the preset")
	fs.Uint64Var(&f.irqSuspend, "irq-suspend-timeout", 0, "per-NAPI irq-suspend-timeout in ns (kernel 6.13+); overrides the preset")
	fs.StringVar(&o.StatePath, "napi-state", "", "file keeping the knob values found at start, for restore (default "+napi.DefaultStatePath("IFACE")+")")
	return f
}

// resolve turns the flags into o.NAPI and folds the preset's epoll
// parameters into o.Reactor. Explicit flags always beat the preset: the
// knob flags here, and the reactor flags --busy-poll-usecs,
// --busy-poll-budget, --prefer-busy-poll and --epoll-timeout.
func (f *napiFlags) resolve(fs *pflag.FlagSet, o *Options) error {
	no, rc := f.out, &o.Reactor
	no.Plain = epollParamsOf(rc)
	if f.mode != "" {
		m, err := napi.ParseMode(f.mode)
		if err != nil {
			return usagef("--poll-mode: %v", err)
		}
		no.ModeName, no.Mode = f.mode, &m
		no.Knobs = m.Knobs()
		changed := fs.Changed
		if m.BusyPolls() {
			if !changed("busy-poll-usecs") {
				rc.Epoll.BusyPollUsecs = m.BusyPollUsecs
			}
			if !changed("busy-poll-budget") {
				rc.Epoll.BusyPollBudget = m.BusyPollBudget
			}
			if !changed("prefer-busy-poll") {
				rc.Epoll.PreferBusyPoll = m.PreferBusyPoll
			}
		}
		if !changed("epoll-timeout") {
			rc.Epoll.TimeoutMs = m.EpollTimeoutMs
		}
	}
	var explicit napi.Knobs
	if fs.Changed("defer-hard-irqs") {
		explicit.DeferHardIRQs = napi.Uint32(f.deferHardIRQs)
	}
	if fs.Changed("gro-flush-timeout") {
		explicit.GROFlushTimeout = napi.Uint64(f.groFlush)
	}
	if fs.Changed("irq-suspend-timeout") {
		explicit.IRQSuspendTimeout = napi.Uint64(f.irqSuspend)
	}
	no.Knobs = no.Knobs.Override(explicit)
	switch {
	case no.Mode != nil:
		rc.Epoll.PollMode = no.ModeName
	case !no.Knobs.Empty():
		rc.Epoll.PollMode = pollModeCustom
	}
	if no.AutoEvery <= 0 {
		return usagef("--poll-auto-interval must be greater than 0 (got %v)", no.AutoEvery)
	}
	if fs.Changed("interface") && no.Iface == "" {
		return usagef("--interface needs an interface name")
	}
	return nil
}

// TouchesKernel reports whether the command line asks for NAPI knobs.
func (no *NAPI) TouchesKernel() bool { return !no.Knobs.Empty() }

// RunAsBase is the fallback when the mode has no NAPI to act on: no knob is
// written and the reactors get no busy-poll parameters the user did not ask
// for explicitly.
func (o *Options) RunAsBase() {
	o.NAPI.Plain.into(&o.Reactor) // captured before the preset, after the explicit flags
	o.NAPI.Knobs = napi.Knobs{}
	o.Reactor.Epoll.PollMode = "base"
}
