package pollmode

import (
	"github.com/gocached/gocached/internal/config"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/internal/protocol"
)

// --poll-mode auto: each NAPI is switched between base and IRQ suspension
// by what the reactor serving it measures, once per --poll-auto-interval.
//
// The rule comes from the testbed (bench/README.md): suspension pays while
// the reactor finds work each time it polls, and costs while it keeps
// running dry, because each time it sleeps the suspension ends and the next
// packet waits for the deferral timer. Under base, a wait that lasts past
// the busy-poll window is the reactor sleeping, so a reactor that slept in
// fewer than a quarter of its waits gets suspension. Under suspension that
// signal is gone (the receive work itself now runs inside epoll_wait, so
// every wait looks long); there the NAPI stays suspended while its waits
// keep returning batches (two events or more on average): a reactor that
// gets one event per wait is running dry between requests, the case where
// suspension measurably loses to base. When suspending,
// gro-flush-timeout is twice the measured service time per event (the gap
// between requests it bridges), within 10-200 µs, and irq-suspend-timeout
// four times the longest batch the reactor has served, within 1-20 ms, so
// one whole batch fits (the cover letter's rule).
const (
	autoSuspendBelow  = 0.25 // slept/waits under which a base NAPI is suspended
	autoKeepBatch     = 2.0  // events/waits under which a suspended NAPI goes back to base
	AutoDeferHardIRQs = 100  // defer-hard-irqs of a suspended NAPI (tests watch for it)
)

// reactorSample is the part of one reactor's `stats reactors` lines the
// tuner reads.
type reactorSample struct {
	napiID                               uint32
	waits, slept, events, busyUs, maxBus uint64
}

// autoTuner holds each NAPI's current choice.
type autoTuner struct {
	log       *slog.Logger
	set       func(id uint32, k napi.Knobs) error
	read      func() map[int]reactorSample
	prev      map[int]reactorSample
	suspended map[uint32]bool
}

// sampleReactors parses `stats reactors` (the engine's one renderer) into
// samples by reactor index.
func sampleReactors(srv protocol.Server) map[int]reactorSample {
	out := map[int]reactorSample{}
	srv.GroupStats("reactors", func(name, value string) {
		rest, ok := strings.CutPrefix(name, "reactor:")
		if !ok {
			return
		}
		idx, field, ok := strings.Cut(rest, ":")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil {
			return
		}
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return
		}
		s := out[i]
		switch field {
		case "napi_id":
			s.napiID = uint32(v)
		case "epoll_waits":
			s.waits = v
		case "slept_waits":
			s.slept = v
		case "events":
			s.events = v
		case "busy_us":
			s.busyUs = v
		case "max_batch_us":
			s.maxBus = v
		}
		out[i] = s
	})
	return out
}

// decide is the rule for one interval's counter deltas d, given whether the
// NAPI is suspended now; it returns the new choice.
func decide(d reactorSample, suspended bool) bool {
	if d.events == 0 || d.waits == 0 {
		return false // idle: interrupts cost nothing, deferral only delays
	}
	if suspended {
		return float64(d.events)/float64(d.waits) >= autoKeepBatch
	}
	return float64(d.slept)/float64(d.waits) < autoSuspendBelow
}

// suspendKnobs are the knobs for a suspended NAPI whose reactor served d in
// the last interval and at most maxBatchUs in one batch so far.
func suspendKnobs(d reactorSample, maxBatchUs uint64) napi.Knobs {
	perEvent := uint64(0)
	if d.events > 0 {
		perEvent = d.busyUs * 1000 / d.events
	}
	gro := min(max(2*perEvent, 10_000), 200_000)
	suspend := min(max(4*maxBatchUs*1000, 1_000_000), 20_000_000)
	return napi.Knobs{DeferHardIRQs: napi.Uint32(AutoDeferHardIRQs), GROFlushTimeout: napi.Uint64(gro), IRQSuspendTimeout: napi.Uint64(suspend)}
}

var baseKnobs = napi.Knobs{DeferHardIRQs: napi.Uint32(0), GROFlushTimeout: napi.Uint64(0), IRQSuspendTimeout: napi.Uint64(0)}

// step samples the reactors once and switches the NAPIs whose choice
// changed.
func (t *autoTuner) step() {
	cur := t.read()
	for i, s := range cur {
		p, seen := t.prev[i]
		if !seen || s.napiID == 0 || p.napiID != s.napiID {
			continue
		}
		d := reactorSample{waits: s.waits - p.waits, slept: s.slept - p.slept, events: s.events - p.events, busyUs: s.busyUs - p.busyUs}
		was := t.suspended[s.napiID]
		now := decide(d, was)
		if now == was {
			continue
		}
		k := baseKnobs
		if now {
			k = suspendKnobs(d, s.maxBus)
		}
		if err := t.set(s.napiID, k); err != nil {
			t.log.Warn("poll mode auto: cannot set the NAPI's knobs", "napi_id", s.napiID, "err", err)
			continue
		}
		t.suspended[s.napiID] = now
		choice := "base"
		if now {
			choice = "suspend"
		}
		t.log.Info("poll mode auto", "napi_id", s.napiID, "reactor", i, "choice", choice, "knobs", k.String(),
			"waits", d.waits, "slept", d.slept, "events", d.events)
	}
	t.prev = cur
}

// StartAutoTuner runs the tuner every o.NAPI.AutoEvery until the returned
// stop is called (before the knobs are restored).
func StartAutoTuner(o *config.Options, ns *Session, srv protocol.Server, log *slog.Logger) (stop func()) {
	if o.NAPI.Mode == nil || !o.NAPI.Mode.Adaptive || ns.applied == nil {
		return func() {}
	}
	t := &autoTuner{log: log, set: ns.setKnobs, read: func() map[int]reactorSample { return sampleReactors(srv) },
		suspended: map[uint32]bool{}}
	t.prev = t.read()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(o.NAPI.AutoEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				t.step()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
