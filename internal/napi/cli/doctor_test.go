package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/probe"
)

var (
	yes = probe.Result{Supported: true, Sentence: "fine"}
	no  = probe.Result{Sentence: "missing; fix: upgrade"}
)

// healthy is a 6.18 host with the testbed's veth as the interface.
func healthy() facts {
	f := facts{kernel: yes, epoll: yes, uring: yes, napiID: yes, capNetAdmin: yes, familyVersion: 1,
		setAttrs: map[uint16]bool{2: true, 5: true, 6: true, napi.AttrIRQSuspendTimeout: true},
		iface:    "srv0", ifindex: 2, names: map[uint32]string{2: "srv0"}, cpus: map[int]bool{0: true, 1: true, 2: true, 3: true}}
	for i := range 4 {
		f.napis = append(f.napis, napi.NAPI{ID: uint32(300 + i), Ifindex: 2, IRQ: -1,
			Knobs: napi.Knobs{DeferHardIRQs: napi.Uint32(0), GROFlushTimeout: napi.Uint64(0), IRQSuspendTimeout: napi.Uint64(0)}})
		f.queues = append(f.queues, napi.Queue{ID: uint32(i), Ifindex: 2, Type: napi.QueueRX})
	}
	return f
}

func withMode(t *testing.T, f facts, name string) facts {
	t.Helper()
	m, err := napi.ParseMode(name)
	if err != nil {
		t.Fatal(err)
	}
	f.modeName, f.mode = name, &m
	return f
}

// line finds the doctor line about topic.
func line(r *report, topic string) (Check, bool) {
	for _, c := range r.checks {
		if c.Topic == topic {
			return c, true
		}
	}
	return Check{}, false
}

func TestJudge(t *testing.T) {
	type want struct {
		topic string
		level Level
		text  string // substring
	}
	tests := []struct {
		name  string
		facts func(t *testing.T) facts
		worst Level
		lines []want
	}{
		{"healthy suspend20", func(t *testing.T) facts { return withMode(t, healthy(), "suspend20") }, OK, []want{
			{"interface srv0", OK, "4 NAPIs, 4 rx queues"},
			{"knobs", OK, "all 4 NAPIs: defer=0 gro=0ns suspend=0ns (suspend20 will change them"},
			{"irq affinity", OK, "no hardware IRQ"},
		}},
		{"four reactors on two CPUs", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			f.cpus = map[int]bool{0: true, 1: true}
			return f
		}, WARN, []want{{"reactors", WARN, "4 reactors for 2 CPUs this process may run on"}}},
		{"four reactors pinned to one CPU", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			f.pinSpec, f.pin = "1,1,1,1", []int{1, 1, 1, 1}
			return f
		}, WARN, []want{{"reactors", WARN, "4 reactors for 1 CPUs in --pin-cpus"}}},
		{"more NAPIs than reactors", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			f.threads = 2
			return f
		}, WARN, []want{{"reactors", WARN, "4 NAPIs for 2 reactors (-t 2)"}}},
		{"threaded kthreads", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			f.pinSpec, f.pin = "0-3", []int{0, 1, 2, 3}
			f.napis[0].PID, f.napis[1].PID, f.napis[2].PID = 901, 902, 903
			f.kthreads = map[uint32]irqAffinity{300: {cpus: []int{2}}, 301: {cpus: []int{0, 1}}, 302: {cpus: []int{7}}}
			return f
		}, WARN, []want{
			{"reactors", OK, "4 reactors (-t auto (one per NAPI)) for 4 NAPIs"},
			{"napi 300 kthread 901", OK, "on CPU 2"},
			{"napi 301 kthread 902", WARN, "any of CPUs 0,1"},
			{"napi 302 kthread 903", WARN, "not one of --pin-cpus"},
		}},
		{"loopback, no mode", func(t *testing.T) facts {
			f := healthy()
			f.iface, f.ifindex, f.napis = "lo", 1, nil
			f.queues = []napi.Queue{{Ifindex: 1, Type: napi.QueueRX}}
			return f
		}, WARN, []want{{"interface lo", WARN, "no NAPIs"}}},
		{"loopback, suspend20", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			f.iface, f.ifindex, f.napis = "lo", 1, nil
			return f
		}, FAIL, []want{{"interface lo", FAIL, "runs as base"}}},
		{"loopback, base", func(t *testing.T) facts {
			f := withMode(t, healthy(), "base")
			f.iface, f.ifindex, f.napis = "lo", 1, nil
			return f
		}, WARN, []want{{"interface lo", WARN, "no NAPIs"}}},
		{"no epoll params, napibusy", func(t *testing.T) facts {
			f := withMode(t, healthy(), "napibusy")
			f.epoll = no
			return f
		}, FAIL, []want{{"EPIOCSPARAMS", FAIL, "upgrade"}}},
		{"no epoll params, defer20", func(t *testing.T) facts {
			f := withMode(t, healthy(), "defer20")
			f.epoll = no
			return f
		}, WARN, []want{{"EPIOCSPARAMS", WARN, "upgrade"}}},
		{"no irq-suspend-timeout, suspend20", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			delete(f.setAttrs, napi.AttrIRQSuspendTimeout)
			return f
		}, FAIL, []want{{"irq-suspend-timeout", FAIL, "6.13"}}},
		{"no irq-suspend-timeout, napibusy", func(t *testing.T) facts {
			f := withMode(t, healthy(), "napibusy")
			delete(f.setAttrs, napi.AttrIRQSuspendTimeout)
			return f
		}, WARN, []want{{"irq-suspend-timeout", WARN, "6.13"}}},
		{"no CAP_NET_ADMIN, suspend20", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			f.capNetAdmin = probe.Result{Sentence: "no CAP_NET_ADMIN: run as root"}
			return f
		}, FAIL, []want{{"privileges", FAIL, "CAP_NET_ADMIN"}}},
		{"no CAP_NET_ADMIN, no mode", func(t *testing.T) facts {
			f := healthy()
			f.capNetAdmin = probe.Result{Sentence: "no CAP_NET_ADMIN: run as root"}
			return f
		}, WARN, []want{{"privileges", WARN, "CAP_NET_ADMIN"}}},
		{"family absent, defer20", func(t *testing.T) facts {
			f := withMode(t, healthy(), "defer20")
			f.familyErr = fmt.Errorf("napi: %w", napi.ErrFamilyAbsent)
			return f
		}, FAIL, []want{{"netdev family", FAIL, "kernel too old"}}},
		{"no napi-set, defer20", func(t *testing.T) facts {
			f := withMode(t, healthy(), "defer20")
			f.setAttrs, f.setErr = nil, fmt.Errorf("policy: %w", napi.ErrUnsupported)
			return f
		}, FAIL, []want{{"napi-set", FAIL, "6.13"}}},
		{"no napi-set, no mode", func(t *testing.T) facts {
			f := healthy()
			f.setAttrs, f.setErr = nil, fmt.Errorf("policy: %w", napi.ErrUnsupported)
			return f
		}, WARN, []want{{"napi-set", WARN, "6.13"}}},
		{"bad mode", func(t *testing.T) facts {
			f := healthy()
			f.modeName, f.modeErr = "turbo", errors.New(`unknown poll mode "turbo"`)
			return f
		}, FAIL, []want{{"poll mode", FAIL, "turbo"}}},
		{"bad pin list", func(t *testing.T) facts {
			f := healthy()
			f.pinSpec, f.pinErr = "x", errors.New("bad cpu")
			return f
		}, FAIL, []want{{"pin-cpus", FAIL, "bad cpu"}}},
		{"pin CPU not available", func(t *testing.T) facts {
			f := healthy()
			f.pinSpec, f.pin = "0,7", []int{0, 7}
			return f
		}, FAIL, []want{{"pin-cpus", FAIL, "CPU 7 not available"}}},
		{"fewer pins than NAPIs", func(t *testing.T) facts {
			f := healthy()
			f.pinSpec, f.pin = "1", []int{1}
			return f
		}, WARN, []want{{"pin-cpus", OK, "reactor 0 on CPU 1"}}},
		{"nic irqs vs pins", func(t *testing.T) facts {
			f := healthy()
			f.napis = f.napis[:2]
			f.napis[0].IRQ, f.napis[1].IRQ = 40, 41
			f.irqs = map[int]irqAffinity{40: {cpus: []int{0}}, 41: {cpus: []int{0, 1}}}
			f.pinSpec, f.pin = "0-1", []int{0, 1}
			return f
		}, WARN, []want{
			{"napi 300 irq 40", OK, "on CPU 0, one of --pin-cpus"},
			{"napi 301 irq 41", WARN, "echo 1 > /proc/irq/41/smp_affinity_list"},
		}},
		{"nic irq spread, no pins", func(t *testing.T) facts {
			f := healthy()
			f.napis = f.napis[:1]
			f.napis[0].IRQ = 40
			f.irqs = map[int]irqAffinity{40: {cpus: []int{0, 1}}}
			return f
		}, WARN, []want{{"napi 300 irq 40", WARN, "may fire on CPUs 0,1"}}},
		{"threadedbusy, kernel refused it on a NAPI", func(t *testing.T) facts {
			f := withMode(t, healthy(), "threadedbusy")
			f.threadedBusy = threadedBusyFacts{probedID: 300,
				probeErr: fmt.Errorf("napi-set: %w (kernel: integer out of range)", napi.ErrNoThreadedBusyPoll)}
			return f
		}, FAIL, []want{{"threaded busy-poll", FAIL, "napi-set on NAPI 300 refused threaded=busy-poll"},
			{"poll mode", OK, "threaded busy-poll"}}},
		{"threadedbusy, kernel took it on a NAPI", func(t *testing.T) facts {
			f := withMode(t, healthy(), "threadedbusy")
			f.threadedBusy = threadedBusyFacts{policyOK: true, probedID: 300, probeOK: true}
			return f
		}, OK, []want{{"threaded busy-poll", OK, "supported: napi-set on NAPI 300 takes threaded=busy-poll"}}},
		{"threadedbusy, no NAPI, the policy allows it", func(t *testing.T) facts {
			f := withMode(t, healthy(), "threadedbusy")
			f.threadedBusy = threadedBusyFacts{policyOK: true}
			return f
		}, OK, []want{{"threaded busy-poll", OK, "policy allows threaded=busy-poll (no NAPI to probe)"}}},
		{"threadedbusy, no NAPI, the policy refuses it", func(t *testing.T) facts {
			f := withMode(t, healthy(), "threadedbusy")
			return f
		}, FAIL, []want{{"threaded busy-poll", FAIL, "policy does not allow threaded=busy-poll (no NAPI to probe); fix: Linux 6.19+"}}},
		{"threadedbusy, nothing answered", func(t *testing.T) facts {
			f := withMode(t, healthy(), "threadedbusy")
			f.threadedBusy = threadedBusyFacts{policyErr: errors.New("getpolicy: EIO")}
			return f
		}, WARN, []want{{"threaded busy-poll", WARN, "unknown: no NAPI to probe"}}},
		{"threadedbusy, probe without privileges: the policy decides", func(t *testing.T) facts {
			f := withMode(t, healthy(), "threadedbusy")
			f.threadedBusy = threadedBusyFacts{probedID: 300, probeErr: fmt.Errorf("napi-set: %w", napi.ErrPermission)}
			return f
		}, FAIL, []want{{"threaded busy-poll", FAIL, "probe on NAPI 300 failed"}}},
		{"suspend20 on a kernel without threaded busy polling", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			f.threadedBusy = threadedBusyFacts{probedID: 300, probeErr: napi.ErrNoThreadedBusyPoll}
			return f
		}, OK, []want{{"threaded busy-poll", OK, "only --poll-mode threadedbusy needs it"}}},
		{"threaded NAPIs: knobs a preset already holds", func(t *testing.T) facts {
			f := withMode(t, healthy(), "suspend20")
			m := *f.mode
			for i := range f.napis {
				f.napis[i].Knobs = m.Knobs()
				f.napis[i].Threaded = napi.Uint32(napi.ThreadedEnabled)
			}
			return f
		}, OK, []want{{"knobs", OK, "threaded=enabled (already what suspend20 sets)"}}},
		{"no interface given", func(t *testing.T) facts {
			f := healthy()
			f.iface = ""
			return f
		}, WARN, []want{{"interface", WARN, "NAPIs: srv0 4"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(tt.facts(t))
			var out bytes.Buffer
			r.print(&out)
			if r.worst() != tt.worst {
				t.Errorf("worst %s, want %s:\n%s", r.worst(), tt.worst, out.String())
			}
			for _, w := range tt.lines {
				c, ok := line(r, w.topic)
				if !ok {
					t.Errorf("no %q line:\n%s", w.topic, out.String())
					continue
				}
				if c.Level != w.level || !strings.Contains(c.Text, w.text) {
					t.Errorf("%s: got %s %q, want %s containing %q", w.topic, c.Level, c.Text, w.level, w.text)
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if !strings.HasPrefix(l, "OK   ") && !strings.HasPrefix(l, "WARN ") && !strings.HasPrefix(l, "FAIL ") {
					t.Errorf("line without a verdict: %q", l)
				}
			}
		})
	}
}
