package store

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// TestForcedGCWithTenMillionItems measures what a garbage collection costs
// with 10 million small items at -m 1024 (mapped rings, as cmd/gocached
// runs), with everything fitting and with the rings evicting: the rings
// and the index hold no pointers, so a forced GC must stay under 1 ms of
// wall time either way. It needs about 1.3 GB and half a minute, so it
// runs only with GOCACHED_MEASURE_GC=1.
func TestForcedGCWithTenMillionItems(t *testing.T) {
	if os.Getenv("GOCACHED_MEASURE_GC") != "1" {
		t.Skip("set GOCACHED_MEASURE_GC=1 to measure (1.3 GB, ~30 s)")
	}
	for _, c := range []struct {
		name string
		vlen int
	}{{"all fit", 8}, {"evicting", 100}} {
		t.Run(c.name, func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 1 << 30})
			value := make([]byte, c.vlen)
			key := make([]byte, 0, 16)
			for i := range 10_000_000 {
				key = strconv.AppendInt(append(key[:0], 'k'), int64(i), 10)
				s.Set(ModeSet, key, 0, 0, value, 0)
			}
			st := s.Stats()
			runtime.GC() // settle what the fill left behind
			best, worst := time.Hour, time.Duration(0)
			for range 5 {
				start := time.Now()
				runtime.GC()
				d := time.Since(start)
				best, worst = min(best, d), max(worst, d)
			}
			var gs debug.GCStats
			debug.ReadGCStats(&gs)
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			t.Logf("%d items, %d evictions, index %d MB: runtime.GC() %v..%v, last STW pause %v, heap %d MB",
				st.CurrItems, st.Evictions, st.HashBytes>>20, best, worst, gs.Pause[0], ms.HeapAlloc>>20)
			if best > time.Millisecond {
				t.Errorf("forced GC took %v", best)
			}
			runtime.KeepAlive(s)
		})
	}
}
