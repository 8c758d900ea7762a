package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestReturnDue(t *testing.T) {
	const mb = 1 << 20
	at := heapSample{allocs: 1000 * mb, retained: 8 * mb, live: 4 * mb, cycles: 10}
	for _, c := range []struct {
		name string
		cur  heapSample
		own  bool // the last cycle was the check's own FreeOSMemory
		want bool
	}{
		{"at rest", heapSample{allocs: at.allocs + mb, retained: 8 * mb, live: 4 * mb, cycles: 10}, false, false},
		{"burst over, no cycle since", heapSample{allocs: at.allocs + mb, retained: 400 * mb, live: 400 * mb, cycles: 10}, false, true},
		{"burst over, a cycle found it dead", heapSample{allocs: at.allocs + mb, retained: 400 * mb, live: 3 * mb, cycles: 11}, false, true},
		{"clients still hold it", heapSample{allocs: at.allocs + mb, retained: 420 * mb, live: 400 * mb, cycles: 11}, false, false},
		{"under load", heapSample{allocs: at.allocs + 500*mb, retained: 400 * mb, live: 3 * mb, cycles: 14}, false, false},
		{"just over the slack", heapSample{allocs: at.allocs, retained: returnSlack + 1, live: 0, cycles: 10}, false, true},
		// A quiet server whose live heap (a large index) exceeds the slack:
		// once its own forced cycle measured that, no cycle every period.
		{"large live heap, returned already", heapSample{allocs: at.allocs + mb, retained: 400 * mb, live: 399 * mb, cycles: 10, index: 396 * mb}, true, false},
		// Stalled clients held their buffers at the check's own cycle and
		// left since: that live figure is stale, the heap is garbage.
		{"burst outlived the own cycle", heapSample{allocs: at.allocs + mb, retained: 400 * mb, live: 399 * mb, cycles: 10, index: 4 * mb}, true, true},
	} {
		if got := returnDue(at, c.cur, c.own); got != c.want {
			t.Errorf("%s: returnDue = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReadHeapSampleSeesABurst: the sample is read from the runtime's real
// metrics, and a dropped burst of buffers shows as retained heap that the
// rule returns.
func TestReadHeapSampleSeesABurst(t *testing.T) {
	buf := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		buf[i].Name = name
	}
	debug.FreeOSMemory()
	rest := readHeapSample(buf)
	burst := make([][]byte, 64)
	for i := range burst {
		burst[i] = make([]byte, 2<<20)
		burst[i][0] = 1 // touched, as a reply buffer is
	}
	runtime.KeepAlive(burst)
	after := readHeapSample(buf)
	if after.retained < rest.retained+100<<20 || after.allocs < rest.allocs+128<<20 {
		t.Fatalf("128 MiB burst not seen: retained %d -> %d, allocs %d -> %d", rest.retained, after.retained, rest.allocs, after.allocs)
	}
	burst = nil
	later := readHeapSample(buf)
	if !returnDue(after, later, false) {
		t.Fatalf("burst dropped, quiet period: not due (%+v -> %+v)", after, later)
	}
	debug.FreeOSMemory()
	if done := readHeapSample(buf); done.retained > rest.retained+32<<20 {
		t.Fatalf("after returning, %d bytes retained (at rest %d)", done.retained, rest.retained)
	}
}

// gcCycles is the runtime's count of completed collection cycles.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// startReturner runs a returner checking every period until the test ends.
func startReturner(t *testing.T, period time.Duration) *memReturner {
	r := &memReturner{period: period}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); r.run(stop) }()
	t.Cleanup(func() { close(stop); <-done })
	return r
}

// waitSamples waits (up to 30 s) until r has taken more than n samples.
func waitSamples(t *testing.T, r *memReturner, n int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); r.samples.Load() <= n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the returner took %d samples, want more than %d", r.samples.Load(), n)
		}
	}
}

// With the heap under the slack the returner sleeps until a collection
// cycle ends, not a period: periods that pass without a cycle take no
// sample, a cycle wakes it.
func TestReturnerSleepsUntilACycle(t *testing.T) {
	debug.FreeOSMemory() // the heap under the slack, whatever ran before
	r := startReturner(t, 5*time.Millisecond)
	waitSamples(t, r, 0)
	// Twenty periods; a cycle someone else's garbage starts voids the try.
	for try := 0; ; try++ {
		cycles, samples := gcCycles(), r.samples.Load()
		time.Sleep(100 * time.Millisecond)
		if gcCycles() != cycles {
			if try == 10 {
				t.Skip("a collection cycle ran during every try")
			}
			continue
		}
		if n := r.samples.Load(); n != samples {
			t.Fatalf("%d samples in 20 periods without a cycle, want none", n-samples)
		}
		break
	}
	n := r.samples.Load()
	runtime.GC()
	waitSamples(t, r, n)
}

// With the collector off the checks keep their period: nothing else would
// ever wake the returner.
func TestReturnerKeepsItsPeriodWithGCOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	r := startReturner(t, 5*time.Millisecond)
	waitSamples(t, r, 3)
}
