package enginetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/store"
)

// Output that a Session produces over several turns (protocol.Env's
// ResumesPending): a metadump larger than one turn's output budget, and a
// `watch` stream fed by other connections.

// dumpItems is enough items for a metadump of a few MB, several times the
// output budget of one Process call.
const dumpItems = 30000

// metadumpSlowReader: a client asks for a metadump and reads nothing for a
// while. The dump must arrive whole and in order once it reads, every item
// exactly once, and another client on the same reactor keeps getting
// answers meanwhile.
func metadumpSlowReader(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{Threads: 1}, Options{})
	for i := range dumpItems {
		k := fmt.Sprintf("dump-%06d", i)
		if s.Env.Store.Set(store.ModeSet, []byte(k), 0, 0, []byte("v"), 0) != store.Stored {
			t.Fatalf("could not store %s", k)
		}
	}
	dumper := s.Dial(t)
	dumper.Send("lru_crawler metadump all\r\n")
	// The dump backs up: the engine writes until the socket is full (or
	// the dump is all written) and then stops.
	var last uint64
	stable := 0
	WaitFor(t, "the engine to stop writing the dump", func() bool {
		time.Sleep(20 * time.Millisecond)
		w := s.Eng.ServerStats().BytesWritten
		if w == last && w > 0 {
			stable++
		} else {
			stable = 0
		}
		last = w
		return stable >= 5
	})
	// The other client must not store anything: the dump walks the store
	// as it is when each slot is reached, so a key stored meanwhile is
	// rightly listed too (as memcached's crawler lists it).
	other := s.Dial(t)
	var worst time.Duration
	for range 20 {
		start := time.Now()
		other.Send("get dump-000003\r\n")
		other.Expect("VALUE dump-000003 0 1\r\n", "v\r\n", "END\r\n")
		worst = max(worst, time.Since(start))
	}
	t.Logf("slowest round trip %v", worst)
	if worst > latencyBound {
		t.Errorf("other client waited %v while the dump backed up; bound %v", worst, latencyBound)
	}
	// memcached 1.6.43 on answers OK before the dump's lines.
	if l := dumper.Line(); l != "OK\r\n" {
		t.Fatalf("metadump began with %q, want OK", trunc(l))
	}
	seen := make(map[string]bool, dumpItems)
	for {
		l := dumper.Line()
		if l == "END\r\n" {
			break
		}
		k, _, ok := strings.Cut(strings.TrimPrefix(l, "key="), " ")
		if !ok || !strings.HasPrefix(l, "key=dump-") || !strings.HasSuffix(l, "\n") {
			t.Fatalf("bad metadump line %q", trunc(l))
		}
		if seen[k] {
			t.Fatalf("%s dumped twice", k)
		}
		seen[k] = true
	}
	if len(seen) != dumpItems {
		t.Fatalf("metadump listed %d items, want %d", len(seen), dumpItems)
	}
	// The connection is usable again after the dump.
	dumper.Send("get dump-000007\r\n")
	dumper.Expect("VALUE dump-000007 0 1\r\n", "v\r\n", "END\r\n")
}

// watchWakeup: a `watch mutations` connection gets a line for every store
// other connections make, pushed by the Session's wakeup with no request
// of its own, and leaves cleanly.
func watchWakeup(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	w := s.Dial(t)
	w.Send("watch mutations\r\n")
	w.Expect("OK\r\n")
	setter := s.Dial(t)
	const n = 200
	for i := range n {
		setter.Send(fmt.Sprintf("set watched-%d 0 0 1\r\nx\r\n", i))
		setter.Expect("STORED\r\n")
		if i == 0 {
			// The first line must come without anything else happening.
			if l := w.Line(); !strings.Contains(l, "key=watched-0 ") {
				t.Fatalf("first watch line %q, want one for watched-0", trunc(l))
			}
		}
	}
	for i := 1; i < n; i++ {
		l := w.Line()
		if want := fmt.Sprintf("key=watched-%d ", i); !strings.Contains(l, want) && !strings.HasPrefix(l, "skipped=") {
			t.Fatalf("watch line %d %q, want one with %q", i, trunc(l), want)
		}
	}
	// Input from a watcher is ignored, as memcached reads no more from it.
	w.Send("get watched-1\r\n")
	setter.Send("set watched-again 0 0 1\r\ny\r\n")
	setter.Expect("STORED\r\n")
	if l := w.Line(); !strings.Contains(l, "key=watched-again ") {
		t.Fatalf("watch line after the watcher's input %q", trunc(l))
	}
	before := s.Eng.ServerStats().CurrConnections
	w.NC.Close()
	WaitFor(t, "the watcher's connection to close", func() bool {
		return s.Eng.ServerStats().CurrConnections < before
	})
	setter.Send("set after 0 0 1\r\nx\r\n")
	setter.Expect("STORED\r\n")
}
