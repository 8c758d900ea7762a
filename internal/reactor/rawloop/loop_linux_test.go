//go:build linux

package rawloop

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// lineSession answers every line with "ok\r\n".
type lineSession struct{}

func (lineSession) Process(in, out []byte) (int, []byte, protocol.Status) {
	consumed := 0
	for {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			return consumed, out, protocol.NeedMore
		}
		consumed += i + 1
		out = append(out, "ok\r\n"...)
	}
}
func (lineSession) Want() int                              { return 0 }
func (lineSession) Reset()                                 {}
func (lineSession) OpenedFrom(int, string, netip.AddrPort) {}
func (lineSession) Pending() bool                          { return false }
func (lineSession) SetWakeup(func())                       {}
func (lineSession) Waiting() bool                          { return false }

func newLineSession() reactor.Session { return lineSession{} }

// sinkIO is an engine whose socket takes every reply at once.
type sinkIO struct {
	l       *Loop[sinkState]
	closing int // Closing calls
}

type sinkState struct{}

func (r *sinkIO) Opened(c *Conn[sinkState])                     { r.rearm(c) }
func (r *sinkIO) Unsent(c *Conn[sinkState]) int                 { return len(c.Out) - c.Sent }
func (r *sinkIO) Turned(c *Conn[sinkState])                     { r.sent(c); r.rearm(c) }
func (r *sinkIO) Rearm(c *Conn[sinkState])                      { r.rearm(c) }
func (r *sinkIO) Closing(*Conn[sinkState])                      { r.closing++ }
func (r *sinkIO) StopAccepting()                                {}
func (r *sinkIO) ReactorStats(func(name, value string), string) {}
func (r *sinkIO) ResetStats()                                   {}

func (r *sinkIO) sent(c *Conn[sinkState]) {
	r.l.Stats.BytesWritten.Add(uint64(len(c.Out) - c.Sent))
	r.l.Pools.PutWrite(c.Out)
	c.Out, c.Sent = nil, 0
}

func (r *sinkIO) rearm(c *Conn[sinkState]) {
	if c.FD < 0 {
		return
	}
	if c.Closing && r.Unsent(c) == 0 {
		r.l.CloseConn(c)
		return
	}
	r.l.Requeue(c, r.Unsent(c), false)
}

func newSinkLoop(t *testing.T) (*Loop[sinkState], *sinkIO) {
	t.Helper()
	g := &Group[sinkState]{Name: "test", Acct: reactor.NewAccounting(0)}
	l, err := NewLoop(g, 0, nil, newLineSession)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.CloseAllConns()
		l.CloseMailbox()
	})
	io := &sinkIO{l: l}
	l.SetIO(io)
	return l, io
}

// socket returns one end of a fresh socket pair (the loop owns it from
// AddConn on) and closes the other at the test's end.
func socket(t *testing.T) int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	return fds[0]
}

// TestSlotFreedOnlyWhenKernelDone: a closed connection keeps its slot while
// an operation of its is in flight (a completion engine's send), so a late
// completion can never reach a new connection in the same slot.
func TestSlotFreedOnlyWhenKernelDone(t *testing.T) {
	l, io := newSinkLoop(t)
	l.group.Acct.Admit()
	l.AddConn(socket(t), 0, 0)
	c := l.ConnAt(0)
	if c == nil || l.Conns() != 1 || l.Stats.Conns.Load() != 1 {
		t.Fatalf("after AddConn: conn %v, %d conns (gauge %d)", c, l.Conns(), l.Stats.Conns.Load())
	}
	c.InFlight = 1
	l.CloseConn(c)
	if l.Conns() != 0 || io.closing != 1 || c.FD != -1 {
		t.Fatalf("after CloseConn: %d conns, %d Closing calls, fd %d", l.Conns(), io.closing, c.FD)
	}
	if l.ConnAt(0) != c {
		t.Fatal("the slot was freed with an operation in flight")
	}
	l.group.Acct.Admit()
	l.AddConn(socket(t), 0, 0)
	if l.ConnAt(1) == nil {
		t.Fatal("a new connection did not take a new slot")
	}
	c.InFlight = 0
	if !l.Free(c) || l.ConnAt(0) != nil || c.Slot != -1 {
		t.Fatalf("Free: slot %d still held", c.Slot)
	}
	l.group.Acct.Admit()
	l.AddConn(socket(t), 0, 0)
	if n := l.ConnAt(0); n == nil || n.Gen == c.Gen {
		t.Fatalf("the freed slot was not reused with a new generation: %v", n)
	}
}

// TestTurnAllocatesNothing: a session turn over buffered requests, its
// replies handed to the engine, allocates nothing once the pools are warm.
func TestTurnAllocatesNothing(t *testing.T) {
	l, _ := newSinkLoop(t)
	l.group.Acct.Admit()
	l.AddConn(socket(t), 0, 0)
	c := l.ConnAt(0)
	req := []byte("get a\r\nget b\r\n")
	turn := func() {
		c.In = append(l.Pools.Read(), req...)
		l.Process(c)
	}
	turn()
	if allocs := testing.AllocsPerRun(200, turn); allocs != 0 {
		t.Fatalf("%.1f allocations per turn, want 0", allocs)
	}
	if got, want := l.Stats.BytesWritten.Load(), uint64(202*8); got != want { // AllocsPerRun warms up with one more run
		t.Fatalf("%d reply bytes sent, want %d", got, want)
	}
	if c.In != nil || c.More || c.Closing {
		t.Fatalf("after the turns: in %q, more %t, closing %t", c.In, c.More, c.Closing)
	}
}
