package protocol

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocached/gocached/internal/store"
)

// newTestEnv returns an Env over a fresh store with memcached's defaults.
func newTestEnv(tb testing.TB) *Env {
	tb.Helper()
	return newTestEnvMem(tb, 64<<20)
}

// newSmallEnv is newTestEnv over a 4 MiB store (-I stays 1 MiB): tests and
// fuzz targets that build a store per input would otherwise spend their time
// allocating and clearing 64 MiB rings.
func newSmallEnv(tb testing.TB) *Env {
	tb.Helper()
	return newTestEnvMem(tb, 4<<20)
}

// newTinyEnv is for fuzz targets, which build a store per input and must
// run thousands of inputs a second: 256 KiB of items, -I 64 KiB.
func newTinyEnv(tb testing.TB) *Env {
	tb.Helper()
	return newTestEnvMemItem(tb, 256<<10, 64<<10)
}

func newTestEnvMem(tb testing.TB, mem int64) *Env {
	tb.Helper()
	return newTestEnvMemItem(tb, mem, 1<<20)
}

func newTestEnvMemItem(tb testing.TB, mem int64, itemMax int) *Env {
	tb.Helper()
	return newTestEnvClock(tb, mem, itemMax, 1)
}

// newStillEnv is newTestEnv with a clock that stands still, for replies
// that print times (meta t, l, me exp= la=) and must match memcached's
// within one second.
func newStillEnv(tb testing.TB) *Env {
	tb.Helper()
	return newTestEnvClock(tb, 4<<20, 1<<20, 0)
}

// newTinyStillEnv is newTinyEnv with a clock that stands still.
func newTinyStillEnv(tb testing.TB) *Env {
	tb.Helper()
	return newTestEnvClock(tb, 256<<10, 64<<10, 0)
}

// newTestEnvClock builds the Env; every reading of its clock is step
// seconds later than the one before.
func newTestEnvClock(tb testing.TB, mem int64, itemMax int, step int64) *Env {
	tb.Helper()
	// With step 1, a flush_all and the next set never share a second,
	// whatever the store's rounding.
	var clock atomic.Int64
	clock.Store(1_700_000_000)
	now := func() int64 { return clock.Add(step) }
	// Two shards, not the default 32 on 2 CPUs: many tests build a store
	// per input, and each shard is half a megabyte more to allocate (and,
	// under the race detector, to shadow).
	// A reservation of the limit alone: fuzzing makes thousands of these
	// stores between two garbage collections.
	st, err := store.New(store.Config{MemoryLimit: mem, MaxItemSize: itemMax, Now: now, Shards: 2, ArenaReserve: mem})
	if err != nil {
		tb.Fatalf("store.New: %v", err)
	}
	// The background loop is stopped at once: each of its rounds reads the
	// clock, which moves time on by step, and does LRU work of its own, so
	// whether a round fell inside an input would change the replies (the
	// split and fuzz tests compare runs that must agree byte for byte).
	st.Close()
	return &Env{
		Store: st,
		Settings: &Settings{
			Version:         "1.6.18",
			Port:            11211,
			MaxConns:        1024,
			Threads:         4,
			MaxBytes:        mem,
			ItemSizeMax:     itemMax,
			Evictions:       true,
			CASEnabled:      true,
			ReqsPerEvent:    20,
			TCPBacklog:      1024,
			BindingProtocol: "ascii",
			Verbosity:       new(atomic.Int32),
		},
		StartUnix:  1,
		Background: func(work func()) { work() },
	}
}

// result is what an engine would have sent and done for one input.
type result struct {
	out    string
	closed bool
	// culled: an error took back replies not yet flushed, which an input
	// cut elsewhere would have flushed (Session.culls).
	culled bool
}

// cutsMayDiffer reports whether two runs of one input, cut differently,
// may rightly answer differently: either took back unflushed replies.
func cutsMayDiffer(a, b result) bool { return a.culled || b.culled }

// drive feeds chunks to s one after another, the way an engine hands over
// each read, and collects the replies. Leftover bytes stay buffered.
func drive(tb testing.TB, s *Session, chunks ...[]byte) result {
	tb.Helper()
	var buf, out []byte
	for _, c := range chunks {
		buf = append(buf, c...)
		for {
			before := len(out)
			n, o, st := s.Process(buf, out)
			out = o
			if n < 0 || n > len(buf) {
				tb.Fatalf("Process consumed %d of %d bytes", n, len(buf))
			}
			buf = buf[n:]
			if st == Close {
				return result{string(out), true, s.culls > 0}
			}
			if st == Yield {
				continue
			}
			// As the engines (reactor.Resume): a Session with pending
			// output gets another call while it makes progress.
			if s.Pending() && (n > 0 || len(o) > before) {
				continue
			}
			break
		}
	}
	return result{string(out), false, s.culls > 0}
}

// runScript runs in as one chunk on a fresh session and store.
func runScript(tb testing.TB, in string) result {
	tb.Helper()
	return driveFresh(tb, newTestEnv, []byte(in))
}

// driveFresh drives chunks through a session over a fresh Env from mk and
// releases the Env's store before it returns. Loops that feed a script
// split at every byte call it per split: with the store's cleanup left to
// the end of the test, hundreds of stores and their background goroutines
// would be alive at once, and under -race they starve the test itself.
func driveFresh(tb testing.TB, mk func(testing.TB) *Env, chunks ...[]byte) result {
	tb.Helper()
	var r result
	scoped(tb, func(tb testing.TB) { r = drive(tb, NewSession(mk(tb)), chunks...) })
	return r
}

// scoped runs fn with a TB whose Cleanup functions run when fn returns
// (or fails the test: Fatal unwinds through here), not at the end of the
// test: for a loop that builds a store per iteration and should hold only
// one at a time.
func scoped(tb testing.TB, fn func(tb testing.TB)) {
	tb.Helper()
	s := &scopeTB{TB: tb}
	defer s.runCleanups()
	fn(s)
}

// scopeTB is a TB whose Cleanup collects the functions for scoped.
type scopeTB struct {
	testing.TB
	cleanups []func()
}

func (s *scopeTB) Cleanup(f func()) { s.cleanups = append(s.cleanups, f) }

func (s *scopeTB) runCleanups() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
}

// lines abbreviates a reply made of "\r\n"-terminated lines.
func lines(ls ...string) string { return strings.Join(ls, "\r\n") + "\r\n" }
