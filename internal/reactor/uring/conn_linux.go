//go:build linux

package uring

import (
	"log/slog"
	"unsafe"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/rawloop"
	"github.com/gocached/gocached/internal/reactor/uring/uringsys"
	"golang.org/x/sys/unix"
)

// connIO is the io_uring engine's own state of a connection. Its replies
// live in two buffers: Out, which the Session appends to, and sending,
// which the kernel reads from while a send is in flight. They never alias,
// so the Session may grow Out (and Go reallocate it) while a send is in
// flight; sending stays referenced here until the send's completion, so its
// memory can be neither moved nor freed under the kernel.
type connIO struct {
	sending []byte // the in-flight send's buffer; sending[soff:] not yet sent
	soff    int
	refsIn  bool // sending is the buffer the connection's Refs place values in
	msg     unix.Msghdr
	iov     *[rawloop.MaxPieces]unix.Iovec // allocated at the connection's first such send

	recvArmed  bool // a receive is in flight
	recvCancel bool // and its cancel has been queued
	drained    bool // the last receive did not fill its buffer: the socket had nothing more
	sendBusy   bool // a send is in flight
	short      bool // the last send came back short: the client reads slowly (conn_mwrite)
	dirty      bool // on the reactor's send list
}

// conn is one client connection, owned by one reactor. Its operations in
// flight are counted in InFlight.
type conn = rawloop.Conn[connIO]

// Unsent is the part of c's replies the socket has not taken.
func (r *loop) Unsent(c *conn) int {
	return len(c.Out) + len(c.IO.sending) - c.IO.soff + c.RefLeft
}

// Opened adds the connection's NAPI to the ring's busy polling (static
// tracking, once) and arms its receive.
func (r *loop) Opened(c *conn) {
	napiID := c.NAPIID
	if napiID != 0 && napiID == r.NAPIID.Load() && napiID != r.napiAdded && r.napi.tracking == uringsys.NAPITrackStatic {
		if err := addNAPIID(r.ring, napiID); err != nil {
			slog.Warn("uring: adding the NAPI ID to the ring's busy polling failed", "reactor", r.ID, "napi_id", napiID, "err", err)
		}
		r.napiAdded = napiID // once, failed or not
	}
	r.Rearm(c)
}

// Closing cancels c's operations (the socket closes when the last one
// ends) and returns the last send's buffer unless the kernel still reads
// it (then the send's completion frees it, maybeFree).
func (r *loop) Closing(c *conn) {
	if c.IO.recvArmed && !c.IO.recvCancel {
		r.cancel(userData(kindRecv, c.Slot, c.Gen))
		c.IO.recvCancel = true
	}
	if c.IO.sendBusy {
		r.cancel(userData(kindSend, c.Slot, c.Gen))
		return
	}
	r.putSending(c)
}

// putSending gives c's send buffer back to the pool.
func (r *loop) putSending(c *conn) {
	r.Pools.PutWrite(c.IO.sending)
	c.IO.sending, c.IO.soff, c.IO.refsIn = nil, 0, false
}

// maybeFree returns a closed connection's slot once no operation of its is
// in flight, and with it the buffer the last send read from.
func (r *loop) maybeFree(c *conn) {
	if r.Free(c) {
		r.putSending(c)
	}
}

// onRecv handles the completion of c's receive.
func (r *loop) onRecv(c *conn, q *uringsys.CQE) {
	if q.Flags&uringsys.CQEFMore == 0 {
		c.IO.recvArmed, c.IO.recvCancel = false, false
		c.InFlight--
	}
	fail := false
	c.IO.drained = q.Res > 0 && int(q.Res) < r.bufs.Size()
	if c.FD >= 0 {
		switch {
		case q.Res > 0:
			r.Stats.BytesRead.Add(uint64(q.Res))
			if !c.Closing {
				c.In = r.appendInput(c.In, r.bufs.Buf(uint16(q.Flags>>uringsys.CQEBufferShift), int(q.Res)))
			}
		case q.Res == 0:
			c.EOF = true
		case q.Res == -int32(unix.ENOBUFS):
			r.stats.enobufs.Add(1) // every buffer in flight: Rearm re-arms once some are back
		case q.Res == -int32(unix.ECANCELED):
		default:
			fail = true
		}
	}
	if q.Flags&uringsys.CQEFBuffer != 0 {
		r.bufs.Recycle(uint16(q.Flags >> uringsys.CQEBufferShift))
	}
	switch {
	case c.FD < 0:
		r.maybeFree(c)
	case fail:
		reactor.NoteClose(c.Sess, reactor.CloseReasonError)
		r.CloseConn(c)
	case !c.More && !reactor.ReadPaused(r.Unsent(c)):
		r.Process(c)
	default:
		r.Rearm(c) // buffered: RunYields or the drain of replies gets to it
	}
}

// appendInput adds received bytes to a connection's input, growing it by
// the shared policy.
func (r *loop) appendInput(in, data []byte) []byte {
	if in == nil {
		in = r.Pools.Read()
	}
	if need := len(in) + len(data); need > cap(in) {
		grown := reactor.Grow(in, max(reactor.ReadBufCap(cap(in), len(in), 0), (need+4095)&^4095))
		r.Pools.PutRead(in)
		in = grown
	}
	return append(in, data...)
}

// Turned queues the replies of a turn for this iteration's send.
func (r *loop) Turned(c *conn) {
	if reactor.ShouldSend(len(c.Out), c.More) || c.Refs != nil {
		r.markDirty(c)
	}
	r.Rearm(c)
}

func (r *loop) markDirty(c *conn) {
	if !c.IO.dirty {
		c.IO.dirty = true
		r.dirty = append(r.dirty, c)
	}
}

// flushSends queues one send per connection with replies: everything a
// connection produced this iteration goes out in one send, and all the
// sends go to the kernel in the loop's one io_uring_enter.
func (r *loop) flushSends() {
	for _, c := range r.dirty {
		c.IO.dirty = false
		if c.FD < 0 || c.IO.sendBusy {
			continue
		}
		if c.IO.sending == nil && len(c.Out) > 0 {
			// Values taken with this buffer's replies (Refs) refer to it:
			// nothing was appended since (no turn runs while they wait).
			c.IO.sending, c.IO.soff, c.Out = c.Out, 0, nil
			c.IO.refsIn = c.Refs != nil
		}
		if c.IO.sending != nil { // new replies, or a send the full SQ held back
			r.armSend(c)
		}
	}
	clear(r.dirty)
	r.dirty = r.dirty[:0]
}

// armSend queues a send of sending[soff:], with the values of the
// connection's Refs in their places when they refer to it: then one
// sendmsg, as the epoll engine's writev, the values straight from the
// store's memory.
func (r *loop) armSend(c *conn) {
	s := r.sqe()
	if s == nil {
		return // retried when the connection is next rearmed
	}
	withRef := c.IO.refsIn && c.Refs != nil
	s.Opcode, s.FD = uringsys.OpSend, int32(c.FD)
	if withRef {
		if c.IO.iov == nil {
			c.IO.iov = new([rawloop.MaxPieces]unix.Iovec)
		}
		n := c.Iovecs(c.IO.iov, c.IO.sending, c.IO.soff)
		c.IO.msg = unix.Msghdr{Iov: &c.IO.iov[0]}
		c.IO.msg.SetIovlen(n)
		s.Opcode, s.Addr, s.Len = uringsys.OpSendmsg, uint64(uintptr(unsafe.Pointer(&c.IO.msg))), 1
	} else {
		p := c.IO.sending[c.IO.soff:]
		s.Addr, s.Len = uint64(uintptr(unsafe.Pointer(&p[0]))), uint32(len(p))
	}
	s.OpFlags = unix.MSG_NOSIGNAL
	s.UserData = userData(kindSend, c.Slot, c.Gen)
	c.IO.sendBusy, c.RefsBusy = true, withRef
	c.InFlight++
}

// onSend handles a send's completion: a short one is resubmitted for the
// rest; a whole one frees the buffer and lets the replies produced since go.
func (r *loop) onSend(c *conn, q *uringsys.CQE) {
	withRef := c.RefsBusy // the send was a sendmsg of sending's pieces and values
	c.IO.sendBusy, c.RefsBusy = false, false
	c.InFlight--
	if c.FD < 0 {
		r.maybeFree(c)
		return
	}
	if q.Res < 0 {
		if q.Res == -int32(unix.EINTR) || q.Res == -int32(unix.EAGAIN) {
			r.armSend(c)
			return
		}
		reactor.NoteClose(c.Sess, reactor.CloseReasonError)
		r.CloseConn(c)
		return
	}
	n := int(q.Res)
	r.Stats.BytesWritten.Add(uint64(n))
	if withRef {
		c.Wrote(c.IO.sending, &c.IO.soff, n)
	} else {
		c.IO.soff += n
	}
	if c.IO.soff < len(c.IO.sending) || c.IO.refsIn && c.Refs != nil {
		c.IO.short = true
		r.stats.shortSends.Add(1)
		r.armSend(c)
		r.Rearm(c)
		return
	}
	c.IO.short = false
	r.putSending(c)
	if reactor.ShouldSend(len(c.Out), c.More) || (c.Closing && len(c.Out) > 0) || c.Refs != nil {
		r.markDirty(c)
	}
	r.Rearm(c)
}

// Rearm closes c when it is done, queues it for another turn when it has
// requests left, and keeps its receive armed exactly while it may read:
// not after EOF or close, not while its unsent replies exceed
// reactor.MaxUnsent, and not while it already holds a large backlog of
// requests it yielded on (what arrives meanwhile is buffered, never lost).
func (r *loop) Rearm(c *conn) {
	if c.FD < 0 {
		return
	}
	pending := r.Unsent(c)
	if c.Closing {
		if pending == 0 {
			r.CloseConn(c)
			return
		}
		if !c.IO.sendBusy {
			r.markDirty(c) // replies kept back for a yielded turn go out before the close
		}
	}
	if c.IO.sending != nil && !c.IO.sendBusy {
		r.markDirty(c) // its send found no SQE: retry in the next iteration
	}
	paused := r.Requeue(c, pending, c.IO.short && c.IO.sendBusy)
	// While yielded requests are buffered (More) nothing new is needed:
	// like the epoll engine, read again once they are processed. A receive
	// still armed then completes with at most one buffer; one that must
	// stop now (paused, closing) is cancelled, except for a value going
	// out from the store (Ext), which pauses reading only briefly: its
	// receive may take its one buffer, as a receive does under More.
	stop := c.EOF || c.Closing || paused
	refsOnly := !c.EOF && !c.Closing && c.Refs != nil && !reactor.ReadPaused(pending)
	switch {
	case !stop && !c.More && !c.IO.recvArmed:
		r.armRecv(c)
	case stop && !refsOnly && c.IO.recvArmed && !c.IO.recvCancel:
		r.cancel(userData(kindRecv, c.Slot, c.Gen))
		c.IO.recvCancel = true
	}
}

// armRecv starts c's receive into the reactor's buffer group: single-shot,
// so it takes at most one buffer (reactor.ReadBufSize) per arm and reads
// no further ahead than the epoll engine's read per event.
//
// Not multishot: a multishot receive capped by sqe.optlen (6.17+) left a
// connection stuck on kernel 6.18, its receive armed and never completed
// with a request's data waiting in the socket (TestValueIntegrity/uring,
// about one 5 s soak in ten when the reactor was descheduled often; never
// in 80 soaks single-shot, nor in 40 uncapped). Uncapped, a multishot
// receive reads a client's input as fast as it arrives, whatever the flow
// control says, so it is no alternative. The single-shot re-arm rides in
// the iteration's one io_uring_enter with the sends.
func (r *loop) armRecv(c *conn) {
	s := r.sqe()
	if s == nil {
		return
	}
	s.Opcode, s.FD, s.Flags, s.BufGroup = uringsys.OpRecv, int32(c.FD), uringsys.SQEBufferSelect, bufGroup
	if c.IO.drained {
		// The last receive emptied the socket, so trying this one at once
		// would find nothing (a tcp_recvmsg for EAGAIN per request at
		// depth 1) before io_uring arms its poll: arm the poll first. It
		// still receives at once if data came meanwhile.
		s.IOPrio = uringsys.RecvPollFirst
	}
	s.UserData = userData(kindRecv, c.Slot, c.Gen)
	c.IO.recvArmed = true
	c.InFlight++
	r.stats.recvArms.Add(1)
}
