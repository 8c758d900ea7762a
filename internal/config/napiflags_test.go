package config

import (
	"testing"

	"github.com/gocached/gocached/internal/napi"
)

// allKnobs sets all three knobs.
func allKnobs(deferHardIRQs uint32, groNs, suspendNs uint64) napi.Knobs {
	return napi.Knobs{DeferHardIRQs: napi.Uint32(deferHardIRQs), GROFlushTimeout: napi.Uint64(groNs), IRQSuspendTimeout: napi.Uint64(suspendNs)}
}

func TestPollModeFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		knobs     napi.Knobs
		mode      string // reactor.Config.PollMode
		usecs     uint32
		budget    uint16
		prefer    bool
		timeoutMs int
	}{
		{"no mode leaves the kernel alone", nil, napi.Knobs{}, "", 0, 64, false, -1},
		{"base writes zeros", []string{"--poll-mode", "base"}, allKnobs(0, 0, 0), "base", 0, 64, false, -1},
		{"defer20", []string{"--poll-mode=defer20"}, allKnobs(100, 20000, 0), "defer20", 0, 64, false, -1},
		{"napibusy", []string{"--poll-mode=napibusy"}, allKnobs(100, 200000, 0), "napibusy", 64, 64, true, -1},
		{"fullbusy", []string{"--poll-mode=fullbusy"}, allKnobs(100, 5000000, 0), "fullbusy", 1000, 64, true, 1},
		{"suspend0", []string{"--poll-mode=suspend0"}, allKnobs(0, 0, 20000000), "suspend0", 0, 64, true, -1},
		{"suspend20", []string{"--poll-mode=suspend20"}, allKnobs(100, 20000, 20000000), "suspend20", 0, 64, true, -1},
		{"knob flags beat the preset", []string{"--poll-mode=suspend20", "--defer-hard-irqs=7", "--gro-flush-timeout=50000", "--irq-suspend-timeout=1000000"},
			allKnobs(7, 50000, 1000000), "suspend20", 0, 64, true, -1},
		{"reactor flags beat the preset", []string{"--poll-mode=fullbusy", "--busy-poll-usecs=10", "--busy-poll-budget=8", "--prefer-busy-poll=false", "--epoll-timeout=-1"},
			allKnobs(100, 5000000, 0), "fullbusy", 10, 8, false, -1},
		{"explicit zero beats the preset", []string{"--poll-mode=defer50", "--gro-flush-timeout=0"},
			allKnobs(100, 0, 0), "defer50", 0, 64, false, -1},
		{"knob flags alone", []string{"--defer-hard-irqs=3"}, napi.Knobs{DeferHardIRQs: napi.Uint32(3)}, pollModeCustom, 0, 64, false, -1},
		{"base keeps explicit busy poll", []string{"--poll-mode=base", "--busy-poll-usecs=20", "--prefer-busy-poll"},
			allKnobs(0, 0, 0), "base", 20, 64, true, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Parse(tt.args)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.args, err)
			}
			if got := o.NAPI.Knobs; got.String() != tt.knobs.String() {
				t.Errorf("knobs = %s, want %s", got, tt.knobs)
			}
			r := o.Reactor.Epoll
			if r.PollMode != tt.mode || r.BusyPollUsecs != tt.usecs || r.BusyPollBudget != tt.budget ||
				r.PreferBusyPoll != tt.prefer || r.TimeoutMs != tt.timeoutMs {
				t.Errorf("reactor: mode %q usecs %d budget %d prefer %v timeout %d; want %q %d %d %v %d",
					r.PollMode, r.BusyPollUsecs, r.BusyPollBudget, r.PreferBusyPoll, r.TimeoutMs,
					tt.mode, tt.usecs, tt.budget, tt.prefer, tt.timeoutMs)
			}
		})
	}
}

// TestRunAsBase: a mode with no NAPI to act on drops the preset's knobs and
// epoll parameters but keeps the ones given explicitly.
func TestRunAsBase(t *testing.T) {
	tests := []struct {
		args      []string
		usecs     uint32
		budget    uint16
		prefer    bool
		timeoutMs int
	}{
		{[]string{"--poll-mode=fullbusy"}, 0, 64, false, -1},
		{[]string{"--poll-mode=fullbusy", "--busy-poll-budget=8", "--epoll-timeout=3"}, 0, 8, false, 3},
		{[]string{"--poll-mode=suspend20", "--prefer-busy-poll", "--busy-poll-usecs=5"}, 5, 64, true, -1},
	}
	for _, tt := range tests {
		o, err := Parse(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		o.RunAsBase()
		r := o.Reactor.Epoll
		if !o.NAPI.Knobs.Empty() || r.PollMode != "base" || r.BusyPollUsecs != tt.usecs || r.BusyPollBudget != tt.budget ||
			r.PreferBusyPoll != tt.prefer || r.TimeoutMs != tt.timeoutMs {
			t.Errorf("%q as base: knobs %s, mode %q usecs %d budget %d prefer %v timeout %d; want none, base, %d %d %v %d",
				tt.args, o.NAPI.Knobs, r.PollMode, r.BusyPollUsecs, r.BusyPollBudget, r.PreferBusyPoll, r.TimeoutMs,
				tt.usecs, tt.budget, tt.prefer, tt.timeoutMs)
		}
	}
}
