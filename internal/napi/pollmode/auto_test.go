package pollmode

import (
	"io"
	"log/slog"
	"testing"

	"github.com/gocached/gocached/internal/napi"
)

func TestAutoDecide(t *testing.T) {
	tests := []struct {
		name      string
		d         reactorSample
		suspended bool
		want      bool
	}{
		{"idle stays base", reactorSample{}, false, false},
		{"idle leaves suspension", reactorSample{waits: 10, slept: 0}, true, false},
		{"busy, rarely sleeping: suspend", reactorSample{waits: 1000, slept: 100, events: 5000}, false, true},
		{"sleeping in a third of waits: stays base", reactorSample{waits: 1000, slept: 300, events: 5000}, false, false},
		{"suspended, every wait long but batches of 4: stays", reactorSample{waits: 1000, slept: 1000, events: 4000}, true, true},
		{"suspended, one event per wait: base", reactorSample{waits: 1000, slept: 1000, events: 1100}, true, false},
	}
	for _, tt := range tests {
		if got := decide(tt.d, tt.suspended); got != tt.want {
			t.Errorf("%s: decide = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAutoSuspendKnobs(t *testing.T) {
	tests := []struct {
		d                 reactorSample
		maxBatchUs        uint64
		wantGRO, wantSusp uint64
	}{
		{reactorSample{events: 1000, busyUs: 15000}, 300, 30_000, 1_200_000},   // 15 µs per event, 300 µs batches
		{reactorSample{events: 1000, busyUs: 1000}, 10, 10_000, 1_000_000},     // floors
		{reactorSample{events: 10, busyUs: 50000}, 90000, 200_000, 20_000_000}, // ceilings
	}
	for _, tt := range tests {
		k := suspendKnobs(tt.d, tt.maxBatchUs)
		if *k.DeferHardIRQs != AutoDeferHardIRQs || *k.GROFlushTimeout != tt.wantGRO || *k.IRQSuspendTimeout != tt.wantSusp {
			t.Errorf("suspendKnobs(%+v, %d) = %s, want defer %d gro %d suspend %d", tt.d, tt.maxBatchUs, k, AutoDeferHardIRQs, tt.wantGRO, tt.wantSusp)
		}
	}
}

// TestAutoStep drives the tuner with scripted counters: it switches a busy
// reactor's NAPI to suspension once, leaves it while it stays busy, puts it
// back to base when idle, and never touches reactors without a NAPI.
func TestAutoStep(t *testing.T) {
	samples := []map[int]reactorSample{
		{0: {napiID: 7}, 1: {napiID: 0}},
		{0: {napiID: 7, waits: 1000, slept: 50, events: 8000, busyUs: 40000, maxBus: 200}, 1: {waits: 1000, events: 9000}},
		{0: {napiID: 7, waits: 2000, slept: 100, events: 16000, busyUs: 80000, maxBus: 200}, 1: {waits: 2000, events: 18000}},
		{0: {napiID: 7, waits: 2001, slept: 101, events: 16000, busyUs: 80000, maxBus: 200}},
	}
	type call struct {
		id uint32
		k  string
	}
	var calls []call
	next := 0
	tu := &autoTuner{log: slog.New(slog.NewTextHandler(io.Discard, nil)), suspended: map[uint32]bool{},
		set:  func(id uint32, k napi.Knobs) error { calls = append(calls, call{id, k.String()}); return nil },
		read: func() map[int]reactorSample { s := samples[next]; next++; return s }}
	tu.prev = tu.read()
	for range 3 {
		tu.step()
	}
	want := []call{{7, suspendKnobs(reactorSample{events: 8000, busyUs: 40000}, 200).String()}, {7, baseKnobs.String()}}
	if len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] {
		t.Errorf("knob writes %v, want %v", calls, want)
	}
}
