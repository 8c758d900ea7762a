//go:build linux

package rawloop

import (
	"sync/atomic"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// Conn is one client connection, owned by one loop. E is the engine's own
// I/O state of it.
type Conn[E any] struct {
	FD       int   // -1 once closed
	Slot     int32 // in the loop's table; -1 once the slot is free again
	Gen      uint32
	Listener int
	NAPIID   uint32 // at accept
	TCP      bool   // a TCP client (not a unix socket's): reactor.AckNow applies
	Sess     reactor.Session

	In   []byte // unconsumed input; nil when empty
	Out  []byte // replies; Out[Sent:] not yet written; nil when none
	Sent int    // (an engine that hands Out over whole to the kernel keeps it 0)
	// Refs are values the Session left to be written from the store's
	// memory (Group.SendsRefs), each before the byte at its At in the
	// buffer that was Out when they were taken; Refs[0] is the first not
	// yet written, RefDone bytes of it written, RefLeft bytes left in all.
	// nil when none. No turn runs until they are written (Wrote).
	Refs    []protocol.RefSeg
	RefDone int
	RefLeft int
	// RefsBusy: the kernel still reads Refs (a send in flight): a close
	// keeps the Session, whose pins hold those bytes, until Free.
	RefsBusy bool
	refs     reactor.RefSender // the Session, when the engine sends by reference

	// InFlight counts operations the kernel still holds for the
	// connection; its slot is reused only at 0.
	InFlight int

	More      bool // the session yielded, or has output pending: another turn is due
	Queued    bool // on the loop's yield list
	WakeLater bool // a wakeup came while the backlog was full: take it once it drains
	EOF       bool // the peer closed its side; finish what was read
	Closing   bool // close once the replies are sent

	LastCmd atomic.Int64 // unix seconds of the last request, for `stats conns`
	State   atomic.Int32 // a reactor.ConnState, for `stats conns`

	IO E
}

// ConnAt is the connection in slot, nil when none (loop goroutine only).
func (l *Loop[E]) ConnAt(slot int) *Conn[E] {
	if slot < 0 || slot >= len(l.conns) {
		return nil
	}
	return l.conns[slot]
}

// AddConn adopts an accepted (or handed-over) connection: a slot, a
// Session, and the engine's I/O (IO.Opened). While draining it is closed
// once nothing is pending.
func (l *Loop[E]) AddConn(fd int, napiID uint32, listener int) {
	l.gen++
	c := &Conn[E]{FD: fd, Gen: l.gen, NAPIID: napiID, Listener: listener, Closing: l.Draining}
	c.LastCmd.Store(l.Now)
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		c.Slot = l.free[n-1]
		l.free = l.free[:n-1]
		l.conns[c.Slot] = c
	} else {
		c.Slot = int32(len(l.conns))
		l.conns = append(l.conns, c)
	}
	l.mu.Unlock()
	c.Sess = l.Pools.Session()
	mb, slot, gen := l.Mailbox, c.Slot, c.Gen
	c.Sess.SetWakeup(func() { mb.PostWake(slot, gen) })
	transport, peer := reactor.PeerOf(fd)
	c.TCP = transport == "tcp"
	c.Sess.OpenedFrom(fd, transport, peer)
	if rs, ok := c.Sess.(reactor.RefSender); ok && l.group.SendsRefs {
		rs.SendRefs()
		c.refs = rs
	}
	l.nconns++
	l.Stats.Conns.Store(int64(l.nconns))
	l.io.Opened(c)
}

// CloseConn closes c and returns its buffers and Session to the pools. The
// descriptor is closed under mu, so the stats reader never queries a
// descriptor number that was reused. The slot is freed once the kernel
// holds nothing of c's (Free).
func (l *Loop[E]) CloseConn(c *Conn[E]) {
	if c.FD < 0 {
		return
	}
	l.io.Closing(c)
	l.mu.Lock()
	unix.Close(c.FD)
	c.FD = -1
	l.mu.Unlock()
	l.nconns--
	l.Stats.Conns.Store(int64(l.nconns))
	c.Refs, c.RefLeft, c.refs = nil, 0, nil // before the Session (Reset) releases its pins
	if c.Sess != nil && !c.RefsBusy {
		l.Pools.PutSession(c.Sess)
		c.Sess = nil
	}
	l.Pools.PutRead(c.In)
	l.Pools.PutWrite(c.Out)
	c.In, c.Out, c.Sent = nil, nil, 0
	l.group.Acct.Release()
	l.Free(c)
}

// Free returns a closed connection's slot once no operation of its is in
// flight, and reports whether it did.
func (l *Loop[E]) Free(c *Conn[E]) bool {
	if c.FD >= 0 || c.InFlight > 0 || c.Slot < 0 {
		return false
	}
	l.mu.Lock()
	l.conns[c.Slot] = nil
	l.mu.Unlock()
	l.free = append(l.free, c.Slot)
	c.Slot = -1
	if c.Sess != nil { // held for a send from the store's memory (RefsBusy)
		l.Pools.PutSession(c.Sess)
		c.Sess = nil
	}
	return true
}

// CloseAllConns closes every connection at once.
func (l *Loop[E]) CloseAllConns() {
	for _, c := range l.conns {
		if c != nil {
			l.CloseConn(c)
		}
	}
}

// OpenFDs lists the descriptors of l's open connections, read under mu
// like `stats conns` reads them.
func (l *Loop[E]) OpenFDs() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var fds []int
	for _, c := range l.conns {
		if c != nil && c.FD >= 0 {
			fds = append(fds, c.FD)
		}
	}
	return fds
}
