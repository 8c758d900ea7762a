//go:build linux

package rawloop

import (
	"strconv"
	"sync/atomic"

	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// Counters are written by their loop and read by whichever goroutine runs
// `stats`; atomics keep that exchange race-free without locks.
type Counters struct {
	Conns        atomic.Int64
	Accepted     atomic.Uint64
	HandoffIn    atomic.Uint64
	HandoffOut   atomic.Uint64
	BytesRead    atomic.Uint64
	BytesWritten atomic.Uint64
	Yields       atomic.Uint64
	RefSends     atomic.Uint64 // values written from the store's memory (Conn.Refs)
	_            [64]byte      // keep neighbouring loops' counters off this cache line
}

// reset clears what `stats reset` clears (Conns is a gauge).
func (c *Counters) reset() {
	for _, v := range []*atomic.Uint64{&c.Accepted, &c.HandoffIn, &c.HandoffOut, &c.BytesRead, &c.BytesWritten, &c.Yields, &c.RefSends} {
		v.Store(0)
	}
}

// connLines appends l's open clients. It holds l.mu, under which l never
// closes a descriptor, so every fd read here is the connection it names.
func (l *Loop[E]) connLines(lines []reactor.ConnLine, now int64) []reactor.ConnLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		if c == nil || c.FD < 0 {
			continue
		}
		line := reactor.ConnLine{FD: c.FD, Addr: "tcp:unknown", ListenAddr: "tcp:unknown",
			State: reactor.ConnState(c.State.Load()), IdleSecs: now - c.LastCmd.Load()}
		if sa, err := unix.Getpeername(c.FD); err == nil {
			line.Addr = reactor.SockaddrString(sa)
		}
		if sa, err := unix.Getsockname(c.FD); err == nil {
			line.ListenAddr = reactor.SockaddrString(sa)
		}
		lines = append(lines, line)
	}
	return lines
}

// misrouted counts l's connections whose SO_INCOMING_NAPI_ID now differs
// from l's NAPI ID, under l.mu for the same reason as connLines.
func (l *Loop[E]) misrouted() int {
	id := l.NAPIID.Load()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.conns {
		if c != nil && c.FD >= 0 && reactor.IncomingNAPIID(c.FD) != id {
			n++
		}
	}
	return n
}

// writeRouting writes the `stats reactors` lines every engine has, each
// name after prefix: napi_id, cpu, conns, accepted, handoff_in,
// handoff_out, misrouted, and ref_sends (values sent without a copy).
func (l *Loop[E]) writeRouting(add func(name, value string), prefix string) {
	u := func(name string, v uint64) { add(prefix+name, strconv.FormatUint(v, 10)) }
	u("napi_id", uint64(l.NAPIID.Load()))
	add(prefix+"cpu", strconv.Itoa(l.CPU))
	u("conns", uint64(max(l.Stats.Conns.Load(), 0)))
	u("accepted", l.Stats.Accepted.Load())
	u("handoff_in", l.Stats.HandoffIn.Load())
	u("handoff_out", l.Stats.HandoffOut.Load())
	u("misrouted", uint64(l.misrouted()))
	u("ref_sends", l.Stats.RefSends.Load())
}

// prefix is l's name prefix in `stats reactors`.
func (l *Loop[E]) prefix() string { return "reactor:" + strconv.Itoa(l.ID) + ":" }
