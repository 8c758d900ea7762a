//go:build linux

package uring

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"github.com/gocached/gocached/kernel/testbed"
)

// TestTestbedNAPIRouting runs the engine on the veth testbed, whose RX
// queues are real NAPIs: with a reactor per queue, every ring must end up
// owning one distinct NAPI ID with all its sockets arriving on it (the
// acceptor hands the others over), and busy polling must be registered
// with static tracking of that ID.
func TestTestbedNAPIRouting(t *testing.T) {
	needIOUring(t)
	b := testbed.Up(t)
	newSession, bind := enginetest.NewSessions(t, 20)
	cfg := reactor.Config{Listen: b.ServerIP, Threads: testbed.Queues, NewSession: newSession,
		Epoll: reactor.EpollConfig{BusyPollUsecs: 20, PreferBusyPoll: true}}
	var eng reactor.Engine
	if err := b.InNS(b.ServerNS, func() error {
		var err error
		eng, err = New(cfg)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	bind(eng, 0)
	e := eng.(*engine)
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

	const nconns = 64
	var conns []net.Conn
	if err := b.InNS(b.ClientNS, func() error {
		for range nconns {
			c, err := net.DialTimeout("tcp4", e.Addr().String(), 5*time.Second)
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
	var wg sync.WaitGroup
	errs := make(chan error, nconns)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetDeadline(time.Now().Add(60 * time.Second))
			r := bufio.NewReader(c)
			for j := range 50 {
				key, val := fmt.Sprintf("c%dk%d", i, j%8), strconv.Itoa(j)
				fmt.Fprintf(c, "set %s 0 0 %d\r\n%s\r\nget %s\r\n", key, len(val), val, key)
				want := fmt.Sprintf("STORED\r\nVALUE %s 0 %d\r\n%s\r\nEND\r\n", key, len(val), val)
				got := make([]byte, len(want))
				if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
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
	enginetest.WaitFor(t, "every connection to reach its reactor", func() bool {
		sum := int64(0)
		for _, r := range e.reactors {
			sum += r.Stats.Conns.Load()
		}
		return sum == nconns
	})
	m := map[string]string{}
	e.GroupStats("reactors", func(name, value string) { m[name] = value })
	seen := map[string]int{}
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
		if tr := m[p+"napi_tracking"]; tr != "static" && tr != "dynamic" {
			t.Errorf("reactor %d: napi_tracking %q with busy polling asked for", i, tr)
		}
		t.Logf("reactor %d: napi_id %s conns %s accepted %s handoff_in %s handoff_out %s enters %s cqes %s tracking %s",
			i, id, m[p+"conns"], m[p+"accepted"], m[p+"handoff_in"], m[p+"handoff_out"], m[p+"enters"], m[p+"cqes"], m[p+"napi_tracking"])
		// What the kernel itself says about the ring's busy polling.
		info, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(e.reactors[i].ring.FD()))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(info), "NAPI:\tenabled") || !strings.Contains(string(info), "napi tracking:\t"+m[p+"napi_tracking"]) {
			t.Errorf("reactor %d: ring fdinfo does not show NAPI busy polling with %s tracking:\n%s", i, m[p+"napi_tracking"], info)
		}
	}
}
