//go:build linux

package epoll

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"github.com/gocached/gocached/kernel/testbed"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// startInServerNS builds the engine on a thread inside the bed's server
// namespace (its listeners and interface discovery belong there) and serves
// it from an ordinary goroutine: sockets keep their namespace.
func startInServerNS(t *testing.T, b *testbed.Bed, cfg reactor.Config) *engine {
	t.Helper()
	cfg.Listen = b.ServerIP
	newSession, bind := enginetest.NewSessions(t, 20)
	cfg.NewSession = newSession
	var e *engine
	if err := b.InNS(b.ServerNS, func() error {
		var err error
		e, err = newEngine(cfg)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	bind(e, cfg.MaxConns)
	served := make(chan error, 1)
	go func() { served <- e.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return e
}

// dialFromClient opens n connections from the client namespace.
func dialFromClient(t *testing.T, b *testbed.Bed, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	if err := b.InNS(b.ClientNS, func() error {
		for range n {
			c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
			if err != nil {
				return err
			}
			conns = append(conns, c)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// load runs rounds set/get pairs on every connection concurrently.
func load(t *testing.T, conns []net.Conn, rounds int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetDeadline(time.Now().Add(60 * time.Second))
			r := bufio.NewReader(c)
			for j := range rounds {
				key := fmt.Sprintf("c%dk%d", i, j%16)
				val := strconv.Itoa(j)
				fmt.Fprintf(c, "set %s 0 0 %d\r\n%s\r\nget %s\r\n", key, len(val), val, key)
				want := fmt.Sprintf("STORED\r\nVALUE %s 0 %d\r\n%s\r\nEND\r\n", key, len(val), val)
				got := make([]byte, len(want))
				if _, err := ioReadFull(r, got); err != nil || string(got) != want {
					errs <- fmt.Errorf("conn %d round %d: %q, %v", i, j, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func statsGroup(t *testing.T, c net.Conn, group string) map[string]string {
	t.Helper()
	r := bufio.NewReader(c)
	out := request(t, c, r, "stats "+group+"\r\n", "END\r\n")
	m := map[string]string{}
	for _, line := range strings.Split(out, "\r\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "STAT" {
			m[f[1]] = f[2]
		}
	}
	return m
}

func TestEpollTestbedRouting(t *testing.T) {
	tests := []struct {
		name string
		// funnel replaces the steering program with one that sends every SYN
		// to reactor 0, so all other reactors get their sockets by handoff.
		funnel bool
	}{
		{"steered by RX queue", false},
		{"all SYNs to one listener", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { testRouting(t, tc.funnel) })
	}
}

func testRouting(t *testing.T, funnel bool) {
	b := testbed.Up(t)
	e := startInServerNS(t, b, reactor.Config{Threads: 0}) // -t auto
	if funnel {
		raw, err := bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: 0}})
		if err != nil {
			t.Fatal(err)
		}
		f := []unix.SockFilter{{Code: raw[0].Op, K: raw[0].K}}
		if err := unix.SetsockoptSockFprog(e.reactors[0].Listeners()[0].FD, unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF,
			&unix.SockFprog{Len: 1, Filter: &f[0]}); err != nil {
			t.Fatal(err)
		}
	}
	if len(e.reactors) != testbed.Queues {
		t.Fatalf("-t auto on %s made %d reactors, want one per NAPI (%d)", b.ServerDev, len(e.reactors), testbed.Queues)
	}
	const nconns = 64
	conns := dialFromClient(t, b, e.Addr().String(), nconns)
	load(t, conns, 50)
	enginetest.WaitFor(t, "every connection to reach its reactor", func() bool {
		sum := int64(0)
		for _, r := range e.reactors {
			sum += r.Stats.Conns.Load()
		}
		return sum == nconns
	})

	m := statsGroup(t, conns[0], "reactors")
	seen := map[string]int{}
	var total, handoffs int
	for i := range e.reactors {
		p := "reactor:" + strconv.Itoa(i) + ":"
		id := m[p+"napi_id"]
		if id == "" || id == "0" {
			t.Errorf("reactor %d: napi_id %q, want a learned nonzero id", i, id)
		} else if j, dup := seen[id]; dup {
			t.Errorf("reactors %d and %d both own NAPI %s", j, i, id)
		}
		seen[id] = i
		if m[p+"misrouted"] != "0" {
			t.Errorf("reactor %d: misrouted %s, want 0", i, m[p+"misrouted"])
		}
		n, _ := strconv.Atoi(m[p+"conns"])
		total += n
		h, _ := strconv.Atoi(m[p+"handoff_out"])
		handoffs += h
		t.Logf("reactor %d: napi_id %s conns %s accepted %s handoff_in %s handoff_out %s events %s max_batch %s",
			i, id, m[p+"conns"], m[p+"accepted"], m[p+"handoff_in"], m[p+"handoff_out"], m[p+"events"], m[p+"max_batch"])
	}
	if total != nconns {
		t.Errorf("stats reactors accounts for %d connections, want %d", total, nconns)
	}
	t.Logf("%d of %d connections were handed over after accept (the rest steered by the reuseport program)", handoffs, nconns)
	// veth's queue_mapping is the RX queue, so the program steers every SYN
	// to the listener of its queue; only the first connections of each
	// queue, before ownership is learned, can need a handoff.
	if funnel {
		if a := m["reactor:0:accepted"]; a != strconv.Itoa(nconns) {
			t.Errorf("reactor 0 accepted %s, want all %d", a, nconns)
		}
		if handoffs == 0 {
			t.Error("no handoffs although every SYN went to reactor 0")
		}
	} else if handoffs > testbed.Queues*testbed.Queues {
		t.Errorf("%d handoffs for %d connections: SYN steering by RX queue is not working", handoffs, nconns)
	}

	// Every server-side socket's own view agrees with its reactor.
	for _, r := range e.reactors {
		want := r.NAPIID.Load()
		for _, fd := range r.OpenFDs() {
			if got := reactor.IncomingNAPIID(fd); got != want {
				t.Errorf("reactor %d (NAPI %d) holds fd %d with SO_INCOMING_NAPI_ID %d", r.ID, want, fd, got)
			}
		}
	}
}

func TestEpollTestbedBusyPoll(t *testing.T) {
	b := testbed.Up(t)
	setSysfs := func(name string, v int) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		path := "/sys/class/net/" + b.ServerDev + "/" + name
		if out, err := b.ServerCmd(ctx, "sh", "-c", "echo "+strconv.Itoa(v)+" > "+path).CombinedOutput(); err != nil {
			t.Fatalf("setting %s: %v %s", path, err, out)
		}
	}
	tests := []struct {
		name          string
		cfg           reactor.Config
		deferIRQs     int
		groFlushNs    int
		wantBusyPolls bool
	}{
		// Without busy polling every packet arrives through the softirq.
		{"base", reactor.Config{}, 0, 0, false},
		// napibusy: hard IRQs deferred and GRO flushed late, so the
		// reactors' epoll_wait busy-polls their NAPI and finds the packets.
		{"napibusy", reactor.Config{Epoll: reactor.EpollConfig{BusyPollUsecs: 64, BusyPollBudget: 64, PreferBusyPoll: true}}, 100, 200_000, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			setSysfs("napi_defer_hard_irqs", tc.deferIRQs)
			setSysfs("gro_flush_timeout", tc.groFlushNs)
			e := startInServerNS(t, b, tc.cfg)
			for _, r := range e.reactors {
				if r.busyPoll != tc.wantBusyPolls {
					t.Fatalf("reactor %d: busy-poll params applied = %t (%v)", r.ID, r.busyPoll, r.paramsErr)
				}
			}
			conns := dialFromClient(t, b, e.Addr().String(), 16)
			load(t, conns, 5) // let the reactors learn their NAPI ids
			before, err := testbed.BusyPollRxPackets(b.ServerNS)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			const rounds = 500
			load(t, conns, rounds)
			after, err := testbed.BusyPollRxPackets(b.ServerNS)
			if err != nil {
				t.Fatal(err)
			}
			grown := after - before
			t.Logf("%s: BusyPollRxPackets grew by %d during %d round trips in %v", tc.name, grown, len(conns)*rounds, time.Since(start))
			// How many packets busy polling catches varies with scheduling
			// (4-45% here); without it the counter does not move at all.
			switch {
			case tc.wantBusyPolls && grown < uint64(len(conns)*rounds)/100:
				t.Errorf("BusyPollRxPackets grew by %d, want at least 1%% of the %d requests busy-polled", grown, len(conns)*rounds)
			case !tc.wantBusyPolls && grown != 0:
				t.Errorf("BusyPollRxPackets grew by %d without busy polling", grown)
			}
		})
	}
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) { return io.ReadFull(r, b) }

// request sends req and reads until the reply ends with end.
func request(t testing.TB, c net.Conn, r *bufio.Reader, req, end string) string {
	t.Helper()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for !strings.HasSuffix(b.String(), end) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v (read %q)", req, err, b.String())
		}
		b.WriteString(line)
	}
	return b.String()
}
