//go:build linux

package epoll

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gocached/gocached/internal/probe"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
)

func groupLines(t *testing.T, e *engine, group string) map[string]string {
	t.Helper()
	m := map[string]string{}
	if !e.GroupStats(group, func(name, value string) {
		if _, dup := m[name]; dup {
			t.Errorf("stats %s: %s written twice", group, name)
		}
		m[name] = value
	}) {
		t.Fatalf("GroupStats(%q) = false", group)
	}
	return m
}

var reactorFields = []string{"napi_id", "cpu", "conns", "accepted", "handoff_in", "handoff_out", "misrouted", "ref_sends",
	"epoll_waits", "events", "max_batch", "empty_waits", "full_batches", "wait_us", "busy_us", "max_batch_us", "slept_waits",
	"batches_1", "batches_2_3", "batches_4_7", "batches_8_15", "batches_16_31", "batches_32_plus", "busy_poll_usecs", "busy_poll_budget", "prefer_busy_poll", "max_events"}

func TestStatsReactors(t *testing.T) {
	e := startFake(t, reactor.Config{Threads: 3, Epoll: reactor.EpollConfig{MaxEvents: 16}}, 20)
	for range 5 {
		c := dial(t, e)
		io.WriteString(c, "gen 1\r\n")
		readExactly(t, c, enginetest.FakeReply(1))
	}
	m := groupLines(t, e, "reactors")
	if want := 3 * (len(reactorFields) + 1); len(m) != want { // + poll_mode
		t.Errorf("%d lines, want %d", len(m), want)
	}
	conns, accepted := 0, 0
	for i := range 3 {
		for _, f := range reactorFields {
			v, ok := m["reactor:"+strconv.Itoa(i)+":"+f]
			if !ok {
				t.Errorf("reactor %d: no %s", i, f)
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Errorf("reactor %d: %s=%q is not a number", i, f, v)
			}
			switch f {
			case "conns":
				conns += n
			case "accepted":
				accepted += n
			case "misrouted", "napi_id", "busy_poll_usecs", "prefer_busy_poll":
				if n != 0 { // loopback: NAPI id 0 everywhere, no busy poll asked
					t.Errorf("reactor %d: %s=%d on loopback, want 0", i, f, n)
				}
			case "max_events":
				if n != 16 {
					t.Errorf("reactor %d: max_events=%d, want 16", i, n)
				}
			case "cpu":
				if n != -1 {
					t.Errorf("reactor %d: cpu=%d unpinned, want -1", i, n)
				}
			}
		}
	}
	if conns != 5 || accepted != 5 {
		t.Errorf("conns=%d accepted=%d over all reactors, want 5 and 5", conns, accepted)
	}
	num := func(i int, f string) int {
		n, _ := strconv.Atoi(m["reactor:"+strconv.Itoa(i)+":"+f])
		return n
	}
	for i := range 3 {
		if waits, empty, full := num(i, "epoll_waits"), num(i, "empty_waits"), num(i, "full_batches"); empty+full > waits {
			t.Errorf("reactor %d: empty_waits %d + full_batches %d > epoll_waits %d", i, empty, full, waits)
		}
		// Every wait that returned events is in exactly one bucket.
		buckets := 0
		for _, b := range []string{"batches_1", "batches_2_3", "batches_4_7", "batches_8_15", "batches_16_31", "batches_32_plus"} {
			buckets += num(i, b)
		}
		// (One wait may return between the loads of a live reactor's counters.)
		if waits, empty := num(i, "epoll_waits"), num(i, "empty_waits"); buckets < waits-empty-1 || buckets > waits-empty+1 {
			t.Errorf("reactor %d: batch buckets sum to %d, want epoll_waits %d - empty_waits %d", i, buckets, waits, empty)
		}
		if num(i, "slept_waits") > num(i, "epoll_waits") || num(i, "max_batch_us") > num(i, "busy_us")+1 {
			t.Errorf("reactor %d: slept_waits %d, max_batch_us %d, busy_us %d inconsistent", i, num(i, "slept_waits"), num(i, "max_batch_us"), num(i, "busy_us"))
		}
	}
	// memcached's counts: the one bound address is one conn, however many
	// reactors share it (curr = 1+5-1, total = 1+5).
	if s := e.ServerStats(); s.CurrConnections != 5 || s.Threads != 3 || s.TotalConnections != 6 {
		t.Errorf("ServerStats curr=%d threads=%d total=%d, want 5, 3, 6",
			s.CurrConnections, s.Threads, s.TotalConnections)
	}
	if e.GroupStats("nonsense", func(string, string) {}) {
		t.Error("unknown group accepted")
	}
	e.ResetStats()
	if s := e.ServerStats(); s.BytesRead != 0 || s.TotalConnections != 0 {
		t.Errorf("after reset: bytes_read=%d total=%d", s.BytesRead, s.TotalConnections)
	}
}

func TestStatsConns(t *testing.T) {
	e := startFake(t, reactor.Config{Threads: 2}, 20)
	c := dial(t, e)
	io.WriteString(c, "gen 1\r\n")
	readExactly(t, c, enginetest.FakeReply(1))
	m := groupLines(t, e, "conns")
	listening, clients := 0, 0
	for k, v := range m {
		if !strings.HasSuffix(k, ":state") {
			continue
		}
		fd := strings.TrimSuffix(k, ":state")
		switch v {
		case "conn_listening":
			listening++
			if m[fd+":addr"] != "tcp:"+e.Addr().String() {
				t.Errorf("listener %s addr %q, want tcp:%s", fd, m[fd+":addr"], e.Addr())
			}
		default:
			clients++
			if m[fd+":addr"] != "tcp:"+c.LocalAddr().String() {
				t.Errorf("client %s addr %q, want tcp:%s", fd, m[fd+":addr"], c.LocalAddr())
			}
			if m[fd+":listen_addr"] != "tcp:"+e.Addr().String() {
				t.Errorf("client %s listen_addr %q", fd, m[fd+":listen_addr"])
			}
		}
	}
	// One listener line per bound address, as memcached has one socket,
	// although each of the two reactors holds one of the group.
	if listening != 1 || clients != 1 {
		t.Errorf("%d listeners and %d clients in stats conns, want 1 and 1: %v", listening, clients, m)
	}
}

func TestBusyPollParams(t *testing.T) {
	if r := probe.EpollParamsSupported(); !r.Supported {
		t.Skipf("kernel without epoll busy-poll params: %s", r.Sentence)
	}
	cfg := reactor.Config{Listen: "127.0.0.1", Threads: 2, Epoll: reactor.EpollConfig{BusyPollUsecs: 50, BusyPollBudget: 64, PreferBusyPoll: true}}
	e, err := newTestEngine(cfg, enginetest.NewFakeStore().NewSession(20))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(t.Context())
	m := groupLines(t, e, "reactors")
	for i, r := range e.reactors {
		got, err := probe.GetEpollParams(r.epfd)
		if err != nil {
			t.Fatal(err)
		}
		want := probe.EpollParams{BusyPollUsecs: 50, BusyPollBudget: 64, PreferBusyPoll: true}
		if got != want {
			t.Errorf("reactor %d: kernel has %v, want %v", i, got, want)
		}
		p := "reactor:" + strconv.Itoa(i) + ":"
		if m[p+"busy_poll_usecs"] != "50" || m[p+"busy_poll_budget"] != "64" || m[p+"prefer_busy_poll"] != "1" {
			t.Errorf("reactor %d stats: %s %s %s", i, m[p+"busy_poll_usecs"], m[p+"busy_poll_budget"], m[p+"prefer_busy_poll"])
		}
	}
}

func TestStatsReactorsNAPIKnobs(t *testing.T) {
	var mu sync.Mutex
	var asked []uint32
	knobs := func(id uint32) (uint32, uint64, uint64, error) {
		mu.Lock()
		asked = append(asked, id)
		mu.Unlock()
		if id == 78 {
			return 0, 0, 0, errors.New("NAPI went away")
		}
		return 100, 20000, 20000000, nil
	}
	tests := []struct {
		name  string
		cfg   reactor.Config
		want  map[string]string
		unset []string
		asked []uint32
	}{
		{"no poll mode", reactor.Config{}, map[string]string{"reactor:0:poll_mode": "none"},
			[]string{"reactor:1:defer_hard_irqs"}, nil},
		{"suspend20", reactor.Config{Epoll: reactor.EpollConfig{PollMode: "suspend20", NAPIKnobs: knobs}}, map[string]string{
			"reactor:0:poll_mode": "suspend20", "reactor:1:poll_mode": "suspend20",
			"reactor:1:defer_hard_irqs": "100", "reactor:1:gro_flush_timeout": "20000",
			"reactor:1:irq_suspend_timeout": "20000000",
		}, []string{"reactor:0:defer_hard_irqs", "reactor:2:defer_hard_irqs"}, []uint32{77, 78}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			tc.cfg.Threads = 3
			e := startFake(t, tc.cfg, 20)
			e.reactors[1].NAPIID.Store(77) // as if learned; reactor 0 has none yet
			e.reactors[2].NAPIID.Store(78) // unreadable
			m := groupLines(t, e, "reactors")
			for k, v := range tc.want {
				if m[k] != v {
					t.Errorf("%s = %q, want %q", k, m[k], v)
				}
			}
			for _, k := range tc.unset {
				if v, ok := m[k]; ok {
					t.Errorf("%s = %q, want no such line", k, v)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(asked) != fmt.Sprint(tc.asked) {
				t.Errorf("knobs read for NAPIs %v, want %v", asked, tc.asked)
			}
		})
	}
}

// threadCPUs returns the Cpus_allowed_list of thread tid, "" once it is gone.
func threadCPUs(tid int32) string {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(int(tid)) + "/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func TestPinCPUs(t *testing.T) {
	cpu := runtime.NumCPU() - 1
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || !set.IsSet(cpu) {
		t.Skipf("CPU %d not available to this process", cpu)
	}
	for _, bad := range [][]int{{runtime.NumCPU()}, {0, -1}, {4096}} {
		if e, err := newTestEngine(reactor.Config{Listen: "127.0.0.1", Threads: 1, Epoll: reactor.EpollConfig{PinCPUs: bad}}, enginetest.NewFakeStore().NewSession(20)); err == nil {
			e.Shutdown(context.Background())
			t.Errorf("--pin-cpus %v accepted", bad)
		}
	}
	e, err := newTestEngine(reactor.Config{Listen: "127.0.0.1", Threads: 2, Epoll: reactor.EpollConfig{PinCPUs: []int{cpu}}}, enginetest.NewFakeStore().NewSession(20))
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- e.Serve() }()
	c := dial(t, e)
	io.WriteString(c, "gen 1\r\n")
	readExactly(t, c, enginetest.FakeReply(1))
	m := groupLines(t, e, "reactors")
	var tids []int32
	for i, r := range e.reactors {
		if got := m["reactor:"+strconv.Itoa(i)+":cpu"]; got != strconv.Itoa(cpu) {
			t.Errorf("reactor %d: cpu %s, want %d", i, got, cpu)
		}
		enginetest.WaitFor(t, "the reactor thread to start", func() bool { return r.TID.Load() != 0 })
		tids = append(tids, r.TID.Load())
	}
	for _, tid := range tids {
		enginetest.WaitFor(t, "the pin", func() bool { return threadCPUs(tid) == strconv.Itoa(cpu) })
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	// A pinned thread must not go back to the runtime's pool. (The main
	// thread is the exception: the runtime parks it forever instead.)
	for _, tid := range tids {
		if int(tid) == os.Getpid() {
			continue
		}
		enginetest.WaitFor(t, "the pinned thread to exit", func() bool { return threadCPUs(tid) == "" })
	}
}
