//go:build linux

package uring

import (
	"log/slog"
	"sync/atomic"
	"unsafe"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// conn is one client connection, owned by one reactor. Its replies live in
// two buffers: out, which the Session appends to, and sending, which the
// kernel reads from while a send is in flight. They never alias, so the
// Session may grow out (and Go reallocate it) while a send is in flight;
// sending stays referenced here until the send's completion, so its memory
// can be neither moved nor freed under the kernel.
type conn struct {
	fd       int // -1 once closed
	slot     int32
	gen      uint32
	listener int
	napiID   uint32
	sess     reactor.Session

	rbuf    []byte // unconsumed input; nil when empty
	out     []byte // replies not yet handed to a send
	sending []byte // the in-flight send's buffer; sending[soff:] not yet sent
	soff    int

	ops        int  // SQEs in flight; the slot is reused only at 0
	recvArmed  bool // a receive is in flight
	recvCancel bool // and its cancel has been queued
	sendBusy   bool // a send is in flight
	short      bool // the last send came back short: the client reads slowly (conn_mwrite)
	dirty      bool // on the reactor's send list
	more       bool // Process yielded with complete requests left in rbuf
	queued     bool // on the yield list
	wakeLater  bool // a wakeup came while the backlog was full: take it once it drains
	eof        bool // the peer closed its side; finish what was read
	closing    bool // close once everything is sent

	lastCmd atomic.Int64 // unix seconds of the last request, for `stats conns`
	state   atomic.Int32 // a reactor.ConnState, for `stats conns`
}

func (c *conn) pending() int { return len(c.out) + len(c.sending) - c.soff }

// addConn adopts an accepted (or handed-over) connection and arms its receive.
func (r *loop) addConn(fd int, napiID uint32, listener int) {
	r.gen++
	c := &conn{fd: fd, gen: r.gen, napiID: napiID, listener: listener}
	c.lastCmd.Store(r.now)
	r.mu.Lock()
	if n := len(r.free); n > 0 {
		c.slot = r.free[n-1]
		r.free = r.free[:n-1]
		r.conns[c.slot] = c
	} else {
		c.slot = int32(len(r.conns))
		r.conns = append(r.conns, c)
	}
	r.mu.Unlock()
	c.sess = r.pools.Session()
	mb, slot, gen := r.mailbox, c.slot, c.gen
	c.sess.SetWakeup(func() { mb.PostWake(slot, gen) })
	transport, peer := reactor.PeerOf(fd)
	c.sess.OpenedFrom(fd, transport, peer)
	r.nconns++
	r.stats.conns.Store(int64(r.nconns))
	if napiID != 0 && napiID == r.napiID.Load() && napiID != r.napiAdded && r.napi.tracking == napiTrackStatic {
		if err := r.ring.addNAPIID(napiID); err != nil {
			slog.Warn("uring: adding the NAPI ID to the ring's busy polling failed", "reactor", r.id, "napi_id", napiID, "err", err)
		}
		r.napiAdded = napiID // once, failed or not
	}
	c.closing = r.draining
	r.rearm(c)
}

// onRecv handles the completion of c's receive.
func (r *loop) onRecv(c *conn, q *cqe) {
	if q.flags&cqeFMore == 0 {
		c.recvArmed, c.recvCancel = false, false
		c.ops--
	}
	fail := false
	if c.fd >= 0 {
		switch {
		case q.res > 0:
			r.stats.bytesRead.Add(uint64(q.res))
			if !c.closing {
				c.rbuf = r.appendInput(c.rbuf, r.bufs.buf(uint16(q.flags>>cqeBufferShift), int(q.res)))
			}
		case q.res == 0:
			c.eof = true
		case q.res == -int32(unix.ENOBUFS):
			r.stats.enobufs.Add(1) // every buffer in flight: rearm re-arms once some are back
		case q.res == -int32(unix.ECANCELED):
		default:
			fail = true
		}
	}
	if q.flags&cqeFBuffer != 0 {
		r.bufs.recycle(uint16(q.flags >> cqeBufferShift))
	}
	switch {
	case c.fd < 0:
		r.maybeFree(c)
	case fail:
		reactor.NoteClose(c.sess, reactor.CloseReasonError)
		r.closeConn(c)
	case !c.more && !reactor.ReadPaused(c.pending()):
		r.process(c)
	default:
		r.rearm(c) // buffered: runYields or the drain of replies gets to it
	}
}

// appendInput adds received bytes to a connection's input, growing it by
// the shared policy.
func (r *loop) appendInput(rbuf, data []byte) []byte {
	if rbuf == nil {
		rbuf = r.pools.Read()
	}
	if need := len(rbuf) + len(data); need > cap(rbuf) {
		size := max(reactor.ReadBufCap(cap(rbuf), len(rbuf), 0), (need+4095)&^4095)
		nb := make([]byte, len(rbuf), size)
		copy(nb, rbuf)
		r.pools.PutRead(rbuf)
		rbuf = nb
	}
	return append(rbuf, data...)
}

// process runs the Session over c's buffered input (up to -R requests) and
// queues the replies for this iteration's send.
func (r *loop) process(c *conn) {
	c.more = false
	if len(c.rbuf) > 0 || c.sess.Pending() {
		if c.out == nil {
			c.out = r.pools.Write()
		}
		c.state.Store(int32(reactor.StateParsing))
		before := len(c.out)
		consumed, out, st, err := reactor.RunSession(c.sess, c.rbuf, c.out)
		if err != nil {
			attrs := []any{"reactor", r.id, "fd", c.fd, "err", err}
			if p, ok := err.(*reactor.SessionPanic); ok {
				attrs = append(attrs, "stack", string(p.Stack))
			}
			slog.Error("uring: session panicked; closing connection", attrs...)
			c.sess = nil // its state is unknown: do not reuse it
			r.closeConn(c)
			return
		}
		r.pools.Replaced(c.out, out)
		c.out = out
		if consumed > 0 { // a request (or part of its value): memcached's last_cmd_time
			c.lastCmd.Store(r.now)
		}
		rest := copy(c.rbuf, c.rbuf[consumed:])
		c.rbuf = c.rbuf[:rest]
		// A Session with pending output gets more turns, like a yield,
		// each once the backlog is under reactor.MaxUnsent (rearm).
		resume := reactor.Resume(c.sess.Pending(), consumed, len(out)-before)
		switch st {
		case protocol.Yield:
			c.more = rest > 0 || resume
			r.stats.yields.Add(1)
		case protocol.Close:
			c.closing = true
			c.rbuf = c.rbuf[:0]
		default:
			c.more = resume
			if size := reactor.ReadBufCap(cap(c.rbuf), len(c.rbuf), c.sess.Want()); len(c.rbuf) > 0 && size > cap(c.rbuf) {
				nb := make([]byte, len(c.rbuf), size)
				copy(nb, c.rbuf)
				c.rbuf = nb
			}
		}
	}
	if c.eof && !c.more {
		c.closing = true // what is left can never complete
	}
	if len(c.rbuf) == 0 && c.rbuf != nil {
		r.pools.PutRead(c.rbuf)
		c.rbuf = nil
	}
	if reactor.ShouldSend(len(c.out), c.more) {
		r.markDirty(c)
	}
	r.rearm(c)
}

func (r *loop) markDirty(c *conn) {
	if !c.dirty {
		c.dirty = true
		r.dirty = append(r.dirty, c)
	}
}

// flushSends queues one send per connection with replies: everything a
// connection produced this iteration goes out in one send, and all the
// sends go to the kernel in the loop's one io_uring_enter.
func (r *loop) flushSends() {
	for _, c := range r.dirty {
		c.dirty = false
		if c.fd < 0 || c.sendBusy {
			continue
		}
		if c.sending == nil && len(c.out) > 0 {
			c.sending, c.soff, c.out = c.out, 0, nil
		}
		if c.sending != nil { // new replies, or a send the full SQ held back
			r.armSend(c)
		}
	}
	clear(r.dirty)
	r.dirty = r.dirty[:0]
}

// armSend queues a send of c.sending[c.soff:].
func (r *loop) armSend(c *conn) {
	s := r.sqe()
	if s == nil {
		return // retried when the connection is next rearmed
	}
	p := c.sending[c.soff:]
	s.opcode, s.fd = opSend, int32(c.fd)
	s.addr, s.len = uint64(uintptr(unsafe.Pointer(&p[0]))), uint32(len(p))
	s.opFlags = unix.MSG_NOSIGNAL
	s.userData = userData(kindSend, c.slot, c.gen)
	c.sendBusy = true
	c.ops++
}

// onSend handles a send's completion: a short one is resubmitted for the
// rest; a whole one frees the buffer and lets the replies produced since go.
func (r *loop) onSend(c *conn, q *cqe) {
	c.sendBusy = false
	c.ops--
	if c.fd < 0 {
		r.maybeFree(c)
		return
	}
	if q.res < 0 {
		if q.res == -int32(unix.EINTR) || q.res == -int32(unix.EAGAIN) {
			r.armSend(c)
			return
		}
		reactor.NoteClose(c.sess, reactor.CloseReasonError)
		r.closeConn(c)
		return
	}
	c.soff += int(q.res)
	r.stats.bytesWritten.Add(uint64(q.res))
	if c.soff < len(c.sending) {
		c.short = true
		r.stats.shortSends.Add(1)
		r.armSend(c)
		r.rearm(c)
		return
	}
	c.short = false
	r.pools.PutWrite(c.sending)
	c.sending, c.soff = nil, 0
	if reactor.ShouldSend(len(c.out), c.more) || (c.closing && len(c.out) > 0) {
		r.markDirty(c)
	}
	r.rearm(c)
}

// rearm closes c when it is done, queues it for another turn when it has
// requests left, and keeps its receive armed exactly while it may read:
// not after EOF or close, not while its unsent replies exceed
// reactor.MaxUnsent, and not while it already holds a large backlog of
// requests it yielded on (what arrives meanwhile is buffered, never lost).
func (r *loop) rearm(c *conn) {
	if c.fd < 0 {
		return
	}
	pending := c.pending()
	if c.closing {
		if pending == 0 {
			r.closeConn(c)
			return
		}
		if !c.sendBusy {
			r.markDirty(c) // replies kept back for a yielded turn go out before the close
		}
	}
	if c.sending != nil && !c.sendBusy {
		r.markDirty(c) // its send found no SQE: retry in the next iteration
	}
	paused := reactor.ReadPaused(pending)
	if c.wakeLater && !paused {
		c.wakeLater, c.more = false, true
	}
	if c.more && !paused && !c.queued {
		c.queued = true
		r.yields = append(r.yields, c)
	}
	switch {
	case c.short && c.sendBusy:
		c.state.Store(int32(reactor.StateWriting))
	case !c.more && c.state.Load() != int32(reactor.StateNew):
		c.state.Store(int32(reactor.IdleState(c.sess)))
	}
	// While yielded requests are buffered (more) nothing new is needed:
	// like the epoll engine, read again once they are processed. A receive
	// still armed then completes with at most one buffer; one that must
	// stop now (paused, closing) is cancelled.
	stop := c.eof || c.closing || paused
	switch {
	case !stop && !c.more && !c.recvArmed:
		r.armRecv(c)
	case stop && c.recvArmed && !c.recvCancel:
		r.cancel(userData(kindRecv, c.slot, c.gen))
		c.recvCancel = true
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
	s.opcode, s.fd, s.flags, s.bufGroup = opRecv, int32(c.fd), sqeBufferSelect, bufGroup
	s.userData = userData(kindRecv, c.slot, c.gen)
	c.recvArmed = true
	c.ops++
	r.stats.recvArms.Add(1)
}

// closeConn closes c at once: its operations are cancelled (the socket
// closes when the last one ends) and the descriptor is closed under mu, so
// the stats reader never queries a descriptor number that was reused.
func (r *loop) closeConn(c *conn) {
	if c.fd < 0 {
		return
	}
	if c.recvArmed && !c.recvCancel {
		r.cancel(userData(kindRecv, c.slot, c.gen))
		c.recvCancel = true
	}
	if c.sendBusy {
		r.cancel(userData(kindSend, c.slot, c.gen))
	}
	r.mu.Lock()
	unix.Close(c.fd)
	c.fd = -1
	r.mu.Unlock()
	r.nconns--
	r.stats.conns.Store(int64(r.nconns))
	if c.sess != nil {
		r.pools.PutSession(c.sess)
		c.sess = nil
	}
	r.pools.PutRead(c.rbuf)
	r.pools.PutWrite(c.out)
	c.rbuf, c.out = nil, nil
	r.eng.acct.Release()
	r.maybeFree(c)
}

// maybeFree returns a closed connection's slot once no operation of its is
// in flight, and with it the buffer the last send read from.
func (r *loop) maybeFree(c *conn) {
	if c.fd >= 0 || c.ops > 0 || c.slot < 0 {
		return
	}
	r.mu.Lock()
	r.conns[c.slot] = nil
	r.mu.Unlock()
	r.free = append(r.free, c.slot)
	c.slot = -1
	r.pools.PutWrite(c.sending)
	c.sending = nil
}
