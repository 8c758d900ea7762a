package enginetest

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/store"
)

// latencyBound is the longest another client may wait for a reply while
// one client floods or stalls. It is generous (the race detector and a
// shared 2-CPU machine with other test binaries and CPU hogs beside it
// stretch a loopback round trip past 2 s now and then) yet below the
// stalls that unfair engines show: a reply held behind a whole pipeline
// of a million gets, or behind a dump written whole in one turn.
const latencyBound = 5 * time.Second

// backpressure: a client pipelines gets of a 100 KB value and never reads
// the replies. The engine must stop reading it once its replies back up,
// and keep answering another client within latencyBound.
func backpressure(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{Threads: 1}, Options{})
	value := strings.Repeat("x", 100<<10)
	if s.Env.Store.Set(store.ModeSet, []byte("big"), 0, 0, []byte(value), 0) != store.Stored {
		t.Fatal("could not store the value")
	}
	hog := s.Dial(t)
	const batches, perBatch = 100, 1000
	go func() {
		req := strings.Repeat("get big\r\n", perBatch)
		for range batches {
			if _, err := hog.NC.Write([]byte(req)); err != nil {
				return
			}
		}
	}()
	var last uint64
	stable := 0
	WaitFor(t, "the engine to stop reading the hog", func() bool {
		time.Sleep(20 * time.Millisecond)
		st := s.Eng.ServerStats()
		if st.BytesRead == last && st.BytesWritten > 0 {
			stable++
		} else {
			stable = 0
		}
		last = st.BytesRead
		return stable >= 10
	})
	if total := uint64(batches * perBatch * len("get big\r\n")); last >= total {
		t.Fatalf("engine read the whole pipeline (%d bytes)", last)
	}
	other := s.Dial(t)
	worst := roundTrips(t, other, 50)
	t.Logf("slowest round trip %v", worst)
	if worst > latencyBound {
		t.Errorf("other client waited %v for a reply while the hog stalled; bound %v", worst, latencyBound)
	}
}

// fairnessLatency: one client floods pipelined gets (reading its replies)
// on the same thread as another client doing round trips; -R must keep the
// other's wait within latencyBound.
func fairnessLatency(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{Threads: 1}, Options{ReqsPerEvent: 20})
	flood := s.Dial(t)
	flood.Send("set k 0 0 1\r\nx\r\n")
	flood.Expect("STORED\r\n")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	req := strings.Repeat("get k\r\n", 2000)
	go func() { // writer: bounded in count and stopped at the end
		defer wg.Done()
		for range 500 {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := flood.NC.Write([]byte(req)); err != nil {
				return
			}
		}
	}()
	go func() { // reader: drains replies so the flood never backs up
		defer wg.Done()
		buf := make([]byte, 256<<10)
		for {
			if _, err := flood.NC.Read(buf); err != nil {
				return
			}
		}
	}()
	// The flood is under way once the engine reads past the set.
	base := s.Eng.ServerStats().BytesRead
	WaitFor(t, "the flood to start", func() bool {
		return s.Eng.ServerStats().BytesRead > base+uint64(len(req))
	})
	other := s.Dial(t)
	worst := roundTrips(t, other, 50)
	close(stop)
	flood.NC.Close()
	wg.Wait()
	t.Logf("slowest round trip %v", worst)
	if worst > latencyBound {
		t.Errorf("a round trip waited %v behind a pipelining client; bound %v", worst, latencyBound)
	}
	if s.Eng.ServerStats().ConnYields == 0 {
		t.Errorf("conn_yields = 0: the flooding client never yielded")
	}
}

// roundTrips does n set round trips and returns the slowest.
func roundTrips(t *testing.T, c *Client, n int) time.Duration {
	var worst time.Duration
	for range n {
		start := time.Now()
		c.Send("set small 0 0 1\r\ny\r\n")
		c.Expect("STORED\r\n")
		worst = max(worst, time.Since(start))
	}
	return worst
}

// idleTimeout: with -o idle_timeout a client that sends nothing is closed
// and counted in idle_kicks, and so is one that drips a line a byte at a
// time without ending it (the clock runs from the last request, memcached's
// last_cmd_time), while one that keeps sending requests stays, and so
// does one partway through a value (memcached kicks only connections
// waiting for a command: reactor.Kickable).
func idleTimeout(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{IdleTimeout: time.Second}, Options{})
	idle := s.Dial(t)
	idle.Send("version\r\n")
	idle.Line()
	slow := s.Dial(t)
	slow.Send("set slow 0 0 10\r\nabc")
	busy := s.Dial(t)
	drip := s.Dial(t)
	drip.Send("get ")
	// longDrip's line is past MaxLineLen already (the Session wants the
	// rest of it): memcached kicks it all the same.
	longDrip := s.Dial(t)
	longDrip.Send("get " + strings.Repeat("k", 3000))
	// busy sends a request every 100 ms for 2.5 s, well inside the timeout
	// between requests, while idle's timeout passes twice over; drip sends
	// a byte of its unended line as often (a write after the kick may
	// fail: that is the point).
	for range 25 {
		busy.Send("version\r\n")
		busy.Line()
		drip.NC.Write([]byte("k"))
		longDrip.NC.Write([]byte("k"))
		time.Sleep(100 * time.Millisecond)
	}
	idle.ExpectEOF()
	// drip's writes after its kick may have drawn a reset: any end will do.
	_ = drip.NC.SetReadDeadline(time.Now().Add(10 * time.Second))
	if l, err := drip.R.ReadString('\n'); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("dripping client: read %q, %v; want it closed", l, err)
	}
	_ = longDrip.NC.SetReadDeadline(time.Now().Add(10 * time.Second))
	if l, err := longDrip.R.ReadString('\n'); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("client dripping a long get line: read %q, %v; want it closed", l, err)
	}
	WaitFor(t, "idle_kicks to count the closes", func() bool { return s.Eng.ServerStats().IdleKicks == 3 })
	slow.Send("defghij\r\n")
	slow.Expect("STORED\r\n")
	busy.Send("version\r\n")
	if l := busy.Line(); !strings.HasPrefix(l, "VERSION") {
		t.Fatalf("busy client after 2.5 s: %q", l)
	}
}

// idleTimeoutWholeSeconds: the idle test is memcached's, on its clock of
// whole seconds: seconds since the last request strictly greater than the
// timeout. A client whose last request came just after a second began is
// therefore still served half a second past the timeout (the second count
// is only equal to it), and closed within the two seconds after that.
func idleTimeoutWholeSeconds(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{IdleTimeout: time.Second}, Options{})
	c := s.Dial(t)
	// Just after a second boundary, so that 1.5 s later the whole
	// seconds elapsed are 1, not 2, whatever the scheduling.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	c.Send("version\r\n")
	c.Line()
	last := time.Now()
	if last.Sub(last.Truncate(time.Second)) > 400*time.Millisecond {
		t.Skipf("request %v into its second: too late to tell", last.Sub(last.Truncate(time.Second)))
	}
	time.Sleep(time.Until(last.Add(1500 * time.Millisecond)))
	c.Send("version\r\n")
	if l := c.Line(); !strings.HasPrefix(l, "VERSION") {
		t.Fatalf("1.5 s after its last request, with idle_timeout 1: %q; memcached's whole-second test keeps it", l)
	}
}
