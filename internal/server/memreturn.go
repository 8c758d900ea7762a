package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Handing memory back after a burst.
//
// Item memory is outside the Go heap, so the heap is connection buffers,
// replies being built and the index: a few MB at rest. A burst of clients
// that stall on large replies or send huge lines can take it to hundreds
// of MB, all garbage once they go. Go collects that garbage at its next
// cycle, which with nothing allocating is the runtime's forced one two
// minutes later, and its scavenger then returns the pages gradually:
// a server measured at 419 MB RSS for 150 s after such a burst, where
// memcached, freeing its buffers, is back at 8 MB at once. So once a
// period, when the server allocated little (the burst is over) and the
// heap still holds more than returnSlack beyond what the last cycle found
// live, gocached collects and returns the free pages at once.

const (
	returnPeriod = 10 * time.Second
	// returnSlack is the heap beyond the live bytes worth a forced cycle:
	// small next to any burst that matters, large next to the heap at rest.
	returnSlack = 64 << 20
	// quietAllocs is the most a period may allocate and still count as
	// quiet: under load the collector runs on its own, and returning pages
	// the next requests would fault in again only costs.
	quietAllocs = 64 << 20
)

// heapSample is what returnDue looks at, from runtime/metrics.
type heapSample struct {
	allocs   uint64 // bytes allocated since the start
	retained uint64 // heap bytes the process holds: objects, unused, free
	live     uint64 // live heap bytes at the end of the last cycle
	cycles   uint64 // completed GC cycles
	index    uint64 // heap bytes of the store's index (hash_bytes), live for good
}

var heapMetrics = []string{
	"/gc/heap/allocs:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/gc/heap/live:bytes",
	"/gc/cycles/total:gc-cycles",
}

func readHeapSample(buf []metrics.Sample) heapSample {
	metrics.Read(buf)
	v := func(i int) uint64 {
		if buf[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return buf[i].Value.Uint64()
	}
	return heapSample{allocs: v(0), retained: v(1) + v(2) + v(3), live: v(4), cycles: v(5)}
}

// returnDue reports whether the heap should be collected and its free
// pages returned now, given the samples at the start and end of a period:
// the period was quiet, and the heap holds returnSlack more than was live.
// The live figure dates from the last cycle; when none ran in the period
// it may predate the burst's end (garbage still counted live), so then any
// excess over the slack is enough: a quiet server's cycle is cheap, its
// heap being mostly pointer-free buffers. But not when the last cycle was
// the one this check forced (ownCycle: its live figure is exact, and what
// was allocated since, under quietAllocs, is all that can have died):
// else a quiet server whose live heap exceeds the slack (the index of a
// few million items) would be collected every period for nothing. Only
// the index is sure to stay live, though: buffers that stalled clients
// held at the check's own cycle die when those clients read or leave, and
// nothing would collect them until the runtime's forced cycle two minutes
// later; so a live figure that exceeds the index by the slack is still
// worth a cycle.
func returnDue(prev, cur heapSample, ownCycle bool) bool {
	if cur.allocs-prev.allocs >= quietAllocs || cur.retained <= returnSlack {
		return false
	}
	if cur.cycles == prev.cycles && (!ownCycle || cur.live > cur.index+returnSlack) {
		return true
	}
	return cur.retained > cur.live+returnSlack
}

// memReturner runs the check every period while the heap holds more than
// returnSlack. Below it no check can be due, and the heap cannot grow past
// it without the collector running (it paces itself on the live heap, a
// few MB at rest), so then the returner sleeps until a cycle ends: an idle
// server's only cycles are the runtime's forced ones, every two minutes,
// where a period's tick woke it, and the runtime's threads with it, every
// 10 s. With the collector off (GOGC=off) nothing else would run one, so
// then the checks keep their period.
type memReturner struct {
	period     time.Duration
	indexBytes func() uint64 // the store's index size (nil: none)
	samples    atomic.Int64  // heap samples taken, for tests
}

// run checks until stop is closed.
func (r *memReturner) run(stop <-chan struct{}) {
	buf := make([]metrics.Sample, len(heapMetrics)+1)
	for i, name := range heapMetrics {
		buf[i].Name = name
	}
	buf[len(heapMetrics)].Name = "/gc/gogc:percent"
	sample := func() heapSample {
		r.samples.Add(1)
		return readHeapSample(buf)
	}
	collectorOff := func() bool {
		v := buf[len(heapMetrics)].Value
		return v.Kind() == metrics.KindUint64 && int64(v.Uint64()) < 0 // GOGC=off reads as -1
	}
	cycleEnded := make(chan struct{}, 1)
	timer := time.NewTimer(r.period)
	defer timer.Stop()
	prev := sample()
	forced, forcedCycles := false, uint64(0) // the cycle count after the last FreeOSMemory
	for {
		if prev.retained <= returnSlack && !collectorOff() {
			notifyCycleEnd(cycleEnded)
			select {
			case <-stop:
				return
			case <-cycleEnded:
			}
			prev = sample() // a period starts: what it allocates decides
			timer.Reset(r.period)
			continue
		}
		select {
		case <-stop:
			return
		case <-timer.C:
		}
		timer.Reset(r.period)
		cur := sample()
		if r.indexBytes != nil {
			cur.index = r.indexBytes()
		}
		if returnDue(prev, cur, forced && cur.cycles == forcedCycles) {
			debug.FreeOSMemory()
			cur = sample()
			forced, forcedCycles = true, cur.cycles
		}
		prev = cur
	}
}

// cycleMark is an allocation whose only use is to be collected.
type cycleMark struct{ _ *byte }

// notifyCycleEnd sends on ch (without blocking) once a collection cycle
// has found a fresh allocation unreachable.
func notifyCycleEnd(ch chan struct{}) {
	runtime.AddCleanup(new(cycleMark), func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}, ch)
}
