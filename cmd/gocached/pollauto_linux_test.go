//go:build linux

package main

import (
	"bufio"
	"github.com/gocached/gocached/internal/napi/pollmode"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocached/gocached/kernel/testbed"
)

// TestPollModeAuto runs --poll-mode auto on the testbed: it starts as base,
// a NAPI whose reactor is kept busy by pipelined clients is switched to IRQ
// suspension (knobs read back over netlink), every NAPI returns to base once
// the load stops, and the knobs found at start are restored at exit.
func TestPollModeAuto(t *testing.T) {
	b := testbed.Up(t)
	old := presetDistinct(t, b)
	s, state := startInBed(t, b, "--poll-mode", "auto", "--poll-auto-interval", "200ms")
	for id, got := range serverKnobs(t, b) {
		if got != (knobValues{}) {
			t.Errorf("at start: NAPI %d has %s, want base", id, got)
		}
	}

	// Load: clients that always have a batch of gets in flight, so the
	// reactors find work whenever they poll. Bounded in time and count.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var replies atomic.Int64
	batch := strings.Repeat("get auto-k\r\n", 32)
	for range 16 {
		nc := dialFromClient(t, b, s.addr)
		nc.SetDeadline(time.Now().Add(20 * time.Second))
		wg.Add(2)
		sent := make(chan struct{}, 4)
		go func() {
			defer wg.Done()
			defer close(sent)
			for i := 0; i < 20000 && !stop.Load(); i++ {
				sent <- struct{}{}
				if _, err := io.WriteString(nc, batch); err != nil {
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			defer nc.Close()
			r := bufio.NewReader(nc)
			for range sent {
				for range 32 {
					if l, err := r.ReadString('\n'); err != nil || l != "END\r\n" {
						return
					}
				}
				replies.Add(32)
			}
		}()
	}
	suspended := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !suspended; {
		time.Sleep(100 * time.Millisecond)
		for _, got := range serverKnobs(t, b) {
			if got.deferHardIRQs == pollmode.AutoDeferHardIRQs && got.irqSuspendTimeoutNs >= 1_000_000 && got.groFlushTimeoutNs >= 10_000 {
				suspended = true
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if !suspended {
		t.Errorf("no NAPI was switched to suspension under load (%d replies); log:\n%s", replies.Load(), s.stderr)
	}
	// One client doing round trips keeps its reactor running dry: that
	// NAPI must go back to base while it still has traffic, the rest idle.
	rt := dialFromClient(t, b, s.addr)
	defer rt.Close()
	rt.SetDeadline(time.Now().Add(20 * time.Second))
	rtr := bufio.NewReader(rt)
	allBase := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !allBase; {
		for range 50 {
			io.WriteString(rt, "get auto-k\r\n")
			if l, err := rtr.ReadString('\n'); err != nil || l != "END\r\n" {
				t.Fatalf("round trip: %q, %v", l, err)
			}
			time.Sleep(time.Millisecond)
		}
		allBase = true
		for _, got := range serverKnobs(t, b) {
			allBase = allBase && got == (knobValues{})
		}
	}
	if !allBase {
		t.Errorf("after the load: knobs %v, want every NAPI back to base", serverKnobs(t, b))
	}
	if log := s.stderr.String(); !strings.Contains(log, "choice=suspend") || !strings.Contains(log, "choice=base") {
		t.Errorf("log lacks the tuner's decisions:\n%s", log)
	}
	stopAndCheckRestored(t, s, b, old, state)
}
