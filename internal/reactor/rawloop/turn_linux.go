//go:build linux

package rawloop

import (
	"log/slog"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// Process runs the Session over c's buffered input (up to -R requests),
// then hands the replies to the engine (IO.Turned).
func (l *Loop[E]) Process(c *Conn[E]) {
	if c.Refs != nil {
		// Values go out from the store first: the Session takes no call
		// before they are written (Wrote brings the turn).
		c.More = false
		l.io.Turned(c)
		return
	}
	c.More = false
	if len(c.In) > 0 || c.Sess.Pending() {
		if c.Out == nil {
			c.Out = l.Pools.Write()
		} else if c.Sent > 0 && cap(c.Out)-len(c.Out) < protocol.ReplyBufCap/2 {
			// Drop the sent part before a turn that may not fit after it:
			// else a client that reads slowly but never lets the backlog
			// empty keeps every byte sent to it in c.Out, which grows past
			// the pooled buffer (protocol.ReplyBufCap) without bound.
			c.Out = c.Out[:copy(c.Out, c.Out[c.Sent:])]
			c.Sent = 0
		}
		c.State.Store(int32(reactor.StateParsing))
		before, received := len(c.Out), len(c.In)
		consumed, out, st, err := reactor.RunSession(c.Sess, c.In, c.Out)
		if err != nil {
			reactor.LogSessionPanic(slog.Default(), l.group.Name+": session panicked; closing connection", err,
				"reactor", l.ID, "fd", c.FD)
			c.Sess = nil // its state is unknown: do not reuse it
			l.CloseConn(c)
			return
		}
		l.Pools.Replaced(c.Out, out)
		c.Out = out
		if c.refs != nil {
			if c.Refs = c.refs.TakeRefs(); c.Refs != nil {
				c.RefDone, c.RefLeft = 0, 0
				for _, seg := range c.Refs {
					c.RefLeft += len(seg.Value)
				}
				l.Stats.RefSends.Add(uint64(len(c.Refs)))
			}
		}
		if consumed > 0 { // a request (or part of its value): memcached's last_cmd_time
			c.LastCmd.Store(l.Now)
		}
		if reactor.AckWanted(c.TCP, received, len(out)-before) && st != protocol.Close {
			reactor.AckNow(c.FD) // no reply carries the ACK the client may wait on
		}
		rest := copy(c.In, c.In[consumed:])
		c.In = c.In[:rest]
		// A Session with pending output gets more turns, like a yield,
		// each once the backlog is under reactor.MaxUnsent (Requeue).
		resume := reactor.Resume(c.Sess.Pending(), consumed, len(out)-before)
		switch st {
		case protocol.Yield:
			c.More = rest > 0 || resume
			l.Stats.Yields.Add(1)
		case protocol.Close:
			c.Closing = true
			c.In = c.In[:0]
		default:
			c.More = resume
			if size := reactor.ReadBufCap(cap(c.In), len(c.In), c.Sess.Want()); len(c.In) > 0 && size > cap(c.In) {
				c.In = reactor.Grow(c.In, size)
			}
		}
	}
	if c.Refs != nil {
		// No turn before the values are written, whatever is buffered or
		// pending: Wrote brings it (and until then nothing is read).
		c.More = false
	}
	if c.EOF && !c.More && c.Refs == nil {
		c.Closing = true // what is left can never complete
	}
	if len(c.In) == 0 && c.In != nil {
		l.Pools.PutRead(c.In)
		c.In = nil
	}
	l.io.Turned(c)
}

// Requeue is the engine-neutral part of a rearm, for a connection with
// unsent replies: it takes a wakeup held back for the backlog, queues c
// for another turn when it has one due and may read, and records its
// state for `stats conns` (writing: a send is stuck on the client). It
// reports whether reading is paused (reactor.ReadPaused).
func (l *Loop[E]) Requeue(c *Conn[E], unsent int, writing bool) (paused bool) {
	// While values go out from the store (Refs) the connection reads
	// nothing, as memcached's does while it transmits: its turn, and the
	// input it would read, wait for them.
	paused = reactor.ReadPaused(unsent) || c.Refs != nil
	if c.WakeLater && !paused {
		c.WakeLater, c.More = false, true
	}
	if c.More && !paused && !c.Queued {
		c.Queued = true
		l.yields = append(l.yields, c)
	}
	switch {
	case writing:
		c.State.Store(int32(reactor.StateWriting))
	case !c.More && c.State.Load() != int32(reactor.StateNew):
		c.State.Store(int32(reactor.IdleState(c.Sess)))
	}
	return paused
}

// RunYields gives every connection that hit -R (or was woken) another turn.
func (l *Loop[E]) RunYields() {
	if len(l.yields) == 0 {
		return
	}
	list := l.yields
	l.yields = l.yieldSpare[:0]
	for _, c := range list {
		c.Queued = false
		if c.FD >= 0 {
			l.Process(c)
		}
	}
	clear(list)
	l.yieldSpare = list[:0]
}

// wakeConn gives a watching connection a turn to write its new lines,
// unless it already has one queued or is closing. While its client is not
// reading (the backlog is past reactor.MaxUnsent) the turn waits for the
// backlog to drain (Requeue), so the lines stay in the watcher's own
// bounded buffer, which counts what it must drop, as memcached's does.
func (l *Loop[E]) wakeConn(c *Conn[E]) {
	switch {
	case c.FD < 0 || c.Closing || c.Queued:
	case reactor.ReadPaused(l.io.Unsent(c)):
		c.WakeLater = true
	default:
		c.Queued = true
		l.yields = append(l.yields, c)
	}
}

func (c *Conn[E]) generation() uint32 { return c.Gen }

// TakeHandoffs adopts the connections other loops routed here and delivers
// the wakeups posted for this loop's connections.
func (l *Loop[E]) TakeHandoffs() {
	l.handoffs = l.Mailbox.Take(l.handoffs[:0])
	for _, h := range l.handoffs {
		if l.Draining {
			unix.Close(h.FD)
			l.group.Acct.Release()
			continue
		}
		l.Stats.HandoffIn.Add(1)
		l.AddConn(h.FD, h.NAPIID, h.Listener)
	}
	clear(l.handoffs)
	l.wakes = reactor.DeliverWakes(l.Mailbox, l.wakes, l.conns, (*Conn[E]).generation, l.wakeConn)
}
