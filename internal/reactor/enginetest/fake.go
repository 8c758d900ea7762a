package enginetest

import (
	"bytes"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// Fake is a small line protocol with the shape of memcached's text
// protocol, so an engine can be tested on its own terms (buffering,
// pipelining, Want for large bodies, -R yields, Close, a panicking
// Session) whatever state internal/protocol is in:
//
//	set <key> <n>\r\n<n bytes>\r\n -> STORED (kept in the FakeStore)
//	get <key>\r\n                  -> VALUE <key> <n>\r\n<data>\r\nEND, or END
//	gen <n>\r\n                    -> FakeReply(n): an n-byte value made up
//	big <n>\r\n                    -> n bytes of 'x' then \r\n
//	sleep <ms>\r\n                 -> SLEPT, after ms milliseconds
//	conns\r\n                      -> the engine's `stats conns` lines, then END
//	panic\r\n                      -> panics (the engine must survive it)
//	quit\r\n                       -> Close
//	anything else                  -> ERROR
//
// A line longer than FakeMaxLine without its newline closes the
// connection. At most PerCall requests are handled per Process call, and
// none once the call's output passes protocol.OutputBudget; with input left
// over the Fake returns Yield.
type Fake struct {
	Store   *FakeStore
	PerCall int // -R; 0: no limit
	// Wanted is what Want reports: the size the unconsumed request needs,
	// set by Process (a test of buffer sizing may set it directly).
	Wanted int
	// Stream makes a Session that always has another turn of output to
	// give (a long pipeline of large gets, seen from the engine): every
	// Process call appends protocol.OutputBudget bytes and Pending holds.
	Stream bool
}

// FakeMaxLine is the longest line a Fake buffers without its newline.
const FakeMaxLine = 2048

// FakeStore is what the Fakes of one engine share: the items, and what
// tests observe of them.
type FakeStore struct {
	// Sleeping receives when a sleep request starts (buffered for 16).
	Sleeping chan struct{}
	// Server answers `conns`; set it once the engine exists.
	Server protocol.Server

	mu     sync.Mutex
	items  map[string][]byte
	resets int
}

// NewFakeStore returns an empty FakeStore.
func NewFakeStore() *FakeStore {
	return &FakeStore{items: make(map[string][]byte), Sleeping: make(chan struct{}, 16)}
}

// NewSession is a Config.NewSession making Fakes over fs that handle at
// most perCall requests per Process call (0: no limit).
func (fs *FakeStore) NewSession(perCall int) func() reactor.Session {
	return func() reactor.Session { return &Fake{Store: fs, PerCall: perCall} }
}

// Resets is how many times a Fake of fs was Reset (once per closed
// connection).
func (fs *FakeStore) Resets() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.resets
}

// fakePattern repeats the alphabet; FakeValue copies from it, so making a
// large value is a few copies rather than a byte-by-byte loop (which the
// race detector slows a hundredfold).
var fakePattern = bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz"), 64<<10/26+1)

// AppendFakeValue appends the n-byte value `gen n` returns: the alphabet,
// repeated.
func AppendFakeValue(b []byte, n int) []byte {
	for i := 0; i < n; {
		k := min(n-i, len(fakePattern)-i%26)
		b = append(b, fakePattern[i%26:i%26+k]...)
		i += k
	}
	return b
}

// FakeValue is the n-byte value `gen n` returns.
func FakeValue(n int) []byte { return AppendFakeValue(make([]byte, 0, n), n) }

// FakeReply is the whole reply to `gen n`.
func FakeReply(n int) []byte {
	b := append([]byte("VALUE k 0 "), strconv.Itoa(n)+"\r\n"...)
	b = AppendFakeValue(b, n)
	return append(b, "\r\nEND\r\n"...)
}

// Want reports the size the unconsumed request needs.
func (f *Fake) Want() int { return f.Wanted }

// Reset readies the Fake for a new connection and counts it.
func (f *Fake) Reset() {
	f.Wanted = 0
	if f.Store != nil {
		f.Store.mu.Lock()
		f.Store.resets++
		f.Store.mu.Unlock()
	}
}

// OpenedFrom is a no-op: the Fake does not report its connection.
func (f *Fake) OpenedFrom(int, string, netip.AddrPort) {}

// Pending holds only for a Stream Fake.
func (f *Fake) Pending() bool { return f.Stream }

// SetWakeup is a no-op: a Fake never watches.
func (f *Fake) SetWakeup(func()) {}

// Waiting is false: a Fake starts nothing it must wait for.
func (f *Fake) Waiting() bool { return false }

// Process handles the complete requests at the start of in.
func (f *Fake) Process(in, out []byte) (int, []byte, protocol.Status) {
	if f.Stream {
		return 0, append(out, make([]byte, protocol.OutputBudget)...), protocol.NeedMore
	}
	f.Wanted = 0
	done := 0
	for handled := 0; done < len(in); handled++ {
		// Like protocol.Session, a turn ends at -R requests or once its
		// output passes protocol.OutputBudget: the rest waits for the
		// next turn (a turn's replies go out in one write, and the race
		// detector checks the whole buffer of every write).
		if (f.PerCall > 0 && handled == f.PerCall) || len(out) >= protocol.OutputBudget {
			return done, out, protocol.Yield
		}
		n, reply, st, ok := f.one(in[done:], out)
		if !ok {
			return done, out, st
		}
		done += n
		out = reply
		if st == protocol.Close {
			return done, out, st
		}
	}
	return done, out, protocol.NeedMore
}

// one handles the request at the front of in, or reports ok=false when it
// is incomplete (setting Wanted when the full size is known, or Close for
// a line too long).
func (f *Fake) one(in, out []byte) (int, []byte, protocol.Status, bool) {
	nl := bytes.IndexByte(in, '\n')
	if nl < 0 {
		if len(in) > FakeMaxLine {
			return 0, out, protocol.Close, false
		}
		return 0, out, protocol.NeedMore, false
	}
	next := nl + 1
	fields := bytes.Fields(in[:nl])
	arg := func(i int) string {
		if i < len(fields) {
			return string(fields[i])
		}
		return ""
	}
	num := func(i int) int { n, _ := strconv.Atoi(arg(i)); return n }
	switch arg(0) {
	case "set":
		n := num(2)
		total := next + n + 2
		if len(in) < total {
			f.Wanted = total
			return 0, out, protocol.NeedMore, false
		}
		f.Store.mu.Lock()
		f.Store.items[arg(1)] = bytes.Clone(in[next : next+n])
		f.Store.mu.Unlock()
		return total, append(out, "STORED\r\n"...), protocol.NeedMore, true
	case "get":
		f.Store.mu.Lock()
		v, hit := f.Store.items[arg(1)]
		f.Store.mu.Unlock()
		if hit {
			out = append(out, "VALUE "+arg(1)+" "+strconv.Itoa(len(v))+"\r\n"...)
			out = append(append(out, v...), "\r\n"...)
		}
		return next, append(out, "END\r\n"...), protocol.NeedMore, true
	case "gen":
		n := num(1)
		out = append(out, "VALUE k 0 "+strconv.Itoa(n)+"\r\n"...)
		out = AppendFakeValue(out, n)
		return next, append(out, "\r\nEND\r\n"...), protocol.NeedMore, true
	case "big":
		n := num(1)
		out = append(out, bytes.Repeat([]byte("x"), n)...)
		return next, append(out, "\r\n"...), protocol.NeedMore, true
	case "sleep":
		f.Store.Sleeping <- struct{}{}
		time.Sleep(time.Duration(num(1)) * time.Millisecond)
		return next, append(out, "SLEPT\r\n"...), protocol.NeedMore, true
	case "conns":
		f.Store.Server.GroupStats("conns", func(name, value string) {
			out = append(out, "STAT "+name+" "+value+"\r\n"...)
		})
		return next, append(out, "END\r\n"...), protocol.NeedMore, true
	case "panic":
		panic("enginetest.Fake: panic requested")
	case "quit":
		return next, out, protocol.Close, true
	}
	return next, append(out, "ERROR\r\n"...), protocol.NeedMore, true
}
