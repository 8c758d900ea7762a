package napi

import (
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	const ms = 1_000_000
	tests := []struct {
		name string
		want Mode
	}{
		{"base", Mode{Name: "base", EpollTimeoutMs: -1}},
		{"defer20", Mode{Name: "defer20", DeferHardIRQs: 100, GROFlushTimeoutNs: 20_000, EpollTimeoutMs: -1}},
		{"defer200", Mode{Name: "defer200", DeferHardIRQs: 100, GROFlushTimeoutNs: 200_000, EpollTimeoutMs: -1}},
		{"napibusy", Mode{Name: "napibusy", DeferHardIRQs: 100, GROFlushTimeoutNs: 200_000,
			BusyPollUsecs: 64, BusyPollBudget: 64, PreferBusyPoll: true, EpollTimeoutMs: -1}},
		{"fullbusy", Mode{Name: "fullbusy", DeferHardIRQs: 100, GROFlushTimeoutNs: 5 * ms,
			BusyPollUsecs: 1000, BusyPollBudget: 64, PreferBusyPoll: true, EpollTimeoutMs: 1}},
		{"suspend0", Mode{Name: "suspend0", IRQSuspendTimeoutNs: 20 * ms,
			BusyPollBudget: 64, PreferBusyPoll: true, EpollTimeoutMs: -1}},
		{"suspend20", Mode{Name: "suspend20", DeferHardIRQs: 100, GROFlushTimeoutNs: 20_000, IRQSuspendTimeoutNs: 20 * ms,
			BusyPollBudget: 64, PreferBusyPoll: true, EpollTimeoutMs: -1}},
		{"suspend1000000", Mode{Name: "suspend1000000", DeferHardIRQs: 100, GROFlushTimeoutNs: 1000 * ms,
			IRQSuspendTimeoutNs: 20 * ms, BusyPollBudget: 64, PreferBusyPoll: true, EpollTimeoutMs: -1}},
		// The kthread polls; the reactors block in epoll_wait.
		{"threadedbusy", Mode{Name: "threadedbusy", DeferHardIRQs: 100, GROFlushTimeoutNs: 15_000,
			ThreadedBusyPoll: true, EpollTimeoutMs: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMode(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("ParseMode(%q)\n got %+v\nwant %+v", tt.name, got, tt.want)
			}
			k := got.Knobs()
			if k.DeferHardIRQs == nil || k.GROFlushTimeout == nil || k.IRQSuspendTimeout == nil {
				t.Fatalf("preset %s leaves a knob unset: %s", tt.name, k)
			}
			if *k.DeferHardIRQs != tt.want.DeferHardIRQs || *k.GROFlushTimeout != tt.want.GROFlushTimeoutNs ||
				*k.IRQSuspendTimeout != tt.want.IRQSuspendTimeoutNs {
				t.Fatalf("Knobs() = %s for %+v", k, got)
			}
			// Only threadedbusy touches a NAPI's threading.
			if k.BusyPollsThreaded() != tt.want.ThreadedBusyPoll || (k.Threaded != nil) != tt.want.ThreadedBusyPoll {
				t.Fatalf("Knobs() = %s: threaded does not follow ThreadedBusyPoll %v", k, tt.want.ThreadedBusyPoll)
			}
		})
	}
}

func TestParseModeRejects(t *testing.T) {
	for _, name := range []string{"", "Base", "defer", "defer0", "defer-5", "defer20us", "defer 20",
		"suspend", "suspendx", "suspend00", "defer1000001", "defer99999999999999999999", "busy", "napibusy1",
		"threaded", "threadedbusy0", "ThreadedBusy", "threaded-busy"} {
		t.Run(name, func(t *testing.T) {
			m, err := ParseMode(name)
			if err == nil {
				t.Fatalf("ParseMode(%q) = %+v, want error", name, m)
			}
			if !strings.Contains(err.Error(), "poll mode") {
				t.Fatalf("error %q does not say it is about the poll mode", err)
			}
		})
	}
}

func TestModePredicates(t *testing.T) {
	tests := []struct {
		name                          string
		needsNAPI, busyPolls, suspend bool
	}{
		{"base", false, false, false},
		{"defer50", true, false, false},
		{"napibusy", true, true, false},
		{"fullbusy", true, true, false},
		{"suspend0", true, true, true},
		{"suspend50", true, true, true},
		{"threadedbusy", true, false, false},
	}
	for _, tt := range tests {
		m, err := ParseMode(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if m.NeedsNAPI() != tt.needsNAPI || m.BusyPolls() != tt.busyPolls || m.Suspends() != tt.suspend {
			t.Errorf("%s: NeedsNAPI %v BusyPolls %v Suspends %v, want %v %v %v", tt.name,
				m.NeedsNAPI(), m.BusyPolls(), m.Suspends(), tt.needsNAPI, tt.busyPolls, tt.suspend)
		}
	}
}

func TestKnobsOverride(t *testing.T) {
	m, _ := ParseMode("suspend20")
	got := m.Knobs().Override(Knobs{GROFlushTimeout: Uint64(50_000)})
	if want := "defer=100 gro=50000ns suspend=20000000ns"; got.String() != want {
		t.Fatalf("override = %s, want %s", got, want)
	}
	if got := (Knobs{}).Override(Knobs{}); !got.Empty() {
		t.Fatalf("empty override = %s", got)
	}
	// A threaded value found on the NAPI survives a preset that does not
	// set it, and threadedbusy replaces it.
	found := Knobs{DeferHardIRQs: Uint32(0), GROFlushTimeout: Uint64(0), IRQSuspendTimeout: Uint64(0), Threaded: Uint32(ThreadedEnabled)}
	if got, want := found.Override(m.Knobs()).String(), "defer=100 gro=20000ns suspend=20000000ns threaded=enabled"; got != want {
		t.Fatalf("suspend20 over a threaded NAPI = %s, want %s", got, want)
	}
	tb, _ := ParseMode("threadedbusy")
	if got, want := found.Override(tb.Knobs()).String(), "defer=100 gro=15000ns suspend=0ns threaded=busy-poll"; got != want {
		t.Fatalf("threadedbusy over a threaded NAPI = %s, want %s", got, want)
	}
	if (Knobs{Threaded: Uint32(0)}).Empty() {
		t.Fatal("a knob set that writes threaded=disabled reads as empty")
	}
}

func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"base", "defer20", "suspend0", "suspend20", "fullbusy", "napibusy", "threadedbusy", "defer0", "suspend"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err != nil {
			return
		}
		if m.Name != s || m.EpollTimeoutMs == 0 {
			t.Fatalf("ParseMode(%q) = %+v", s, m)
		}
		// Deferral without a flush timeout would be a silent no-op.
		if (m.DeferHardIRQs > 0) != (m.GROFlushTimeoutNs > 0) {
			t.Fatalf("%q: defer %d with gro %d", s, m.DeferHardIRQs, m.GROFlushTimeoutNs)
		}
		if m.Suspends() && !m.PreferBusyPoll {
			t.Fatalf("%q suspends without prefer_busy_poll", s)
		}
	})
}
