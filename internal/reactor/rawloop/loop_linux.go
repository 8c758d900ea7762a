//go:build linux

package rawloop

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// IO is what a Loop asks of its engine, per connection event or turn (never
// per byte).
type IO[E any] interface {
	// Opened starts the engine's I/O on a connection just added; when that
	// fails it closes the connection (Loop.CloseConn).
	Opened(c *Conn[E])
	// Unsent is how many reply bytes c holds that the socket has not taken.
	Unsent(c *Conn[E]) int
	// Turned follows a session turn: send what it produced, then Rearm.
	Turned(c *Conn[E])
	// Rearm closes c when it is done and asks the kernel for what c needs
	// next (input, output), queueing it for a turn (Loop.Requeue).
	Rearm(c *Conn[E])
	// Closing runs before c's descriptor is closed: end what the kernel
	// still does for it.
	Closing(c *Conn[E])
	// StopAccepting runs when the loop starts draining: no new connection
	// may come from the loop's own listeners from here on.
	StopAccepting()
	// ReactorStats adds the engine's own `stats reactors` lines, each name
	// after prefix; ResetStats clears its counters (`stats reset`).
	ReactorStats(add func(name, value string), prefix string)
	ResetStats()
}

// Loop is one reactor's bookkeeping; E is the engine's own state of a
// connection (Conn.IO), so each engine's Loop is compiled for it. An
// engine's reactor embeds *Loop and is its IO. Everything is touched by the
// loop's goroutine only, except what mu guards (the connection and listener
// tables and their descriptors, read by `stats conns` and `stats
// reactors`) and the atomics.
type Loop[E any] struct {
	ID      int
	CPU     int // pinned CPU, -1 when unpinned
	Mailbox *reactor.Mailbox
	Pools   reactor.LoopPools
	Stats   Counters
	NAPIID  atomic.Uint32 // the NAPI this loop serves, 0 until learned
	TID     atomic.Int32  // the locked thread's id once running

	Now      int64 // unix seconds at the last wakeup
	Draining bool  // BeginDrain ran: no new connections, the open ones end

	group *Group[E]
	io    IO[E]

	mu        sync.Mutex
	listeners []Listener
	conns     []*Conn[E] // by slot; nil entries are free
	free      []int32
	nconns    int
	gen       uint32 // last connection generation handed out

	nextSweep  int64 // unix seconds of the next idle_timeout sweep
	yields     []*Conn[E]
	yieldSpare []*Conn[E]
	handoffs   []reactor.Handoff
	wakes      []uint64

	acceptPausedUntil time.Time // zero when accepting
}

// NewLoop makes loop id of g, pinned to cpus[id % len(cpus)] when cpus is
// set, and adds it to g.Loops. SetIO must be called before it runs.
func NewLoop[E any](g *Group[E], id int, cpus []int, newSession func() reactor.Session) (*Loop[E], error) {
	l := &Loop[E]{ID: id, CPU: -1, group: g, Pools: reactor.LoopPools{NewSession: newSession, Worker: id}}
	if len(cpus) > 0 {
		l.CPU = cpus[id%len(cpus)]
	}
	var err error
	if l.Mailbox, err = reactor.NewMailbox(); err != nil {
		return nil, err
	}
	g.Loops = append(g.Loops, l)
	return l, nil
}

// Wake interrupts the loop's wait (reactor.Loop).
func (l *Loop[E]) Wake() { l.Mailbox.Wake() }

// SetIO plugs in the engine's I/O.
func (l *Loop[E]) SetIO(io IO[E]) { l.io = io }

// Conns is the number of open connections.
func (l *Loop[E]) Conns() int { return l.nconns }

// Yielded reports whether a connection waits for a turn: the next wait
// must not sleep.
func (l *Loop[E]) Yielded() bool { return len(l.yields) > 0 }

// LockThread locks the calling goroutine to its OS thread for good (a
// pinned thread is discarded, not reused) and pins it to l.CPU.
func (l *Loop[E]) LockThread() error {
	runtime.LockOSThread()
	l.TID.Store(int32(unix.Gettid()))
	if l.CPU >= 0 {
		var set unix.CPUSet
		set.Set(l.CPU)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pin to CPU %d: %w", l.CPU, err)
		}
	}
	return nil
}

// CloseMailbox closes the connections still waiting in l's mailbox and the
// mailbox itself, once the loop has ended (or never ran).
func (l *Loop[E]) CloseMailbox() {
	if l.Mailbox == nil {
		return
	}
	for _, h := range l.Mailbox.Take(nil) {
		unix.Close(h.FD)
		l.group.Acct.Release()
	}
	l.Mailbox.Close()
}
