//go:build linux

package epoll

import (
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// conn is one client connection, owned by one reactor.
type conn struct {
	fd       int // -1 once closed
	slot     int32
	listener int
	napiID   uint32 // at accept
	sess     reactor.Session
	gen      uint32 // tells this connection from a later one in the same slot

	rbuf []byte // unconsumed input in rbuf[:len]; nil when empty
	out  []byte // replies; out[woff:] is unsent; nil when all sent
	woff int

	interest  uint32 // registered epoll events
	wblocked  bool   // the last write stopped at EAGAIN: wait for EPOLLOUT
	more      bool   // Process yielded with complete requests left in rbuf
	queued    bool   // on the reactor's yield list
	wakeLater bool   // a wakeup came while the backlog was full: take it once it drains
	eof       bool   // the peer closed its side; finish what was read
	readFull  bool   // the last read filled the buffer: more is likely waiting
	closing   bool   // close once out is sent

	lastCmd atomic.Int64 // unix seconds of the last request, for `stats conns`
	state   atomic.Int32 // a reactor.ConnState, for `stats conns`
}

// addConn registers an accepted (or handed-over) connection.
func (r *loop) addConn(fd int, napiID uint32, listener int) {
	c := &conn{fd: fd, napiID: napiID, listener: listener, interest: unix.EPOLLIN | unix.EPOLLRDHUP}
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
	ev := unix.EpollEvent{Events: c.interest, Fd: int32(fd), Pad: c.slot}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		r.eng.logAcceptError(err)
		r.closeConn(c)
		return
	}
	c.sess = r.pools.Session()
	r.gen++
	c.gen = r.gen
	mb, slot, gen := r.mailbox, c.slot, c.gen
	c.sess.SetWakeup(func() { mb.PostWake(slot, gen) })
	transport, peer := reactor.PeerOf(fd)
	c.sess.OpenedFrom(fd, transport, peer)
	r.nconns++
	r.stats.conns.Store(int64(r.nconns))
	if r.draining {
		c.closing = true
		r.rearm(c)
	}
}

// closeConn closes c and returns its buffers and session to the pools. The
// table entry is cleared and the fd closed under mu, so the stats reader
// never queries a descriptor number that was reused.
func (r *loop) closeConn(c *conn) {
	if c.fd < 0 {
		return
	}
	r.mu.Lock()
	r.conns[c.slot] = nil
	unix.Close(c.fd)
	r.mu.Unlock()
	c.fd = -1
	r.free = append(r.free, c.slot)
	if c.sess != nil {
		r.nconns--
		r.stats.conns.Store(int64(r.nconns))
		r.pools.PutSession(c.sess)
		c.sess = nil
	}
	r.pools.PutRead(c.rbuf)
	r.pools.PutWrite(c.out)
	c.rbuf, c.out = nil, nil
	r.eng.acct.Release()
}

func (r *loop) connEvent(c *conn, events uint32) {
	// A hangup is a peer gone both ways: a unix socket's close says so at
	// once (TCP's close says RDHUP). What it sent first is still to be read
	// and served, as memcached serves it, so only an error, or a hangup on
	// a connection that no longer reads, closes here.
	if events&unix.EPOLLERR != 0 || events&unix.EPOLLHUP != 0 && c.interest&unix.EPOLLIN == 0 && !c.more {
		if events&unix.EPOLLERR != 0 || !c.eof { // else its EOF was read: an orderly close
			reactor.NoteClose(c.sess, reactor.CloseReasonError)
		}
		r.closeConn(c)
		return
	}
	if events&unix.EPOLLOUT != 0 {
		if !r.write(c) {
			return
		}
	}
	// A connection with buffered requests (more) gets its turn in runYields.
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP) != 0 && c.interest&unix.EPOLLIN != 0 && !c.more {
		// A read that filled the buffer likely left more in the socket (a
		// large value arriving): read on, up to maxReadTurns buffers, rather
		// than go back through epoll_wait for each 16 KiB, as memcached
		// reads a value on until EAGAIN. A connection that yields, stops
		// reading or has replies stuck gets no extra turn.
		for turn := 1; ; turn++ {
			if !r.read(c) {
				return
			}
			full := c.readFull
			r.process(c)
			if !full || turn >= maxReadTurns || c.fd < 0 || c.more || c.closing || c.eof ||
				c.wblocked || c.interest&unix.EPOLLIN == 0 {
				return
			}
		}
	}
	r.rearm(c)
}

// maxReadTurns bounds the reads one readiness event gets when each fills
// the buffer: 16 of 16 KiB, a quarter MiB, before other connections' turn.
const maxReadTurns = 16

// read does one read into c's buffer. It returns false if c was closed.
func (r *loop) read(c *conn) bool {
	if c.rbuf == nil {
		c.rbuf = r.pools.Read()
	}
	if size := reactor.ReadBufCap(cap(c.rbuf), len(c.rbuf), 0); size > cap(c.rbuf) {
		c.rbuf = reactor.Grow(c.rbuf, size)
	}
	n, err := readNonblock(c.fd, c.rbuf[len(c.rbuf):cap(c.rbuf)])
	c.readFull = err == nil && n == cap(c.rbuf)-len(c.rbuf)
	switch {
	case err == nil && n > 0:
		c.rbuf = c.rbuf[:len(c.rbuf)+n]
		r.stats.bytesRead.Add(uint64(n))
	case err == nil:
		c.eof = true
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		// Level-triggered: epoll reports the socket again if it is still readable.
	default:
		reactor.NoteClose(c.sess, reactor.CloseReasonError)
		r.closeConn(c)
		return false
	}
	return true
}

// process runs the session over c's buffered input (up to -R requests),
// then sends every reply produced with one write.
func (r *loop) process(c *conn) {
	c.more = false
	if len(c.rbuf) > 0 || c.sess.Pending() {
		if c.out == nil {
			c.out = r.pools.Write()
		} else if c.woff > 0 && cap(c.out)-len(c.out) < protocol.ReplyBufCap/2 {
			// Drop the sent part before a turn that may not fit after it:
			// else a client that reads slowly but never lets the backlog
			// empty keeps every byte sent to it in c.out, which grows past
			// the pooled buffer (protocol.ReplyBufCap) without bound.
			c.out = c.out[:copy(c.out, c.out[c.woff:])]
			c.woff = 0
		}
		c.state.Store(int32(reactor.StateParsing))
		before := len(c.out)
		consumed, out, st, err := reactor.RunSession(c.sess, c.rbuf, c.out)
		if err != nil {
			attrs := []any{"reactor", r.id, "fd", c.fd, "err", err}
			if p, ok := err.(*reactor.SessionPanic); ok {
				attrs = append(attrs, "stack", string(p.Stack))
			}
			slog.Error("epoll: session panicked; closing connection", attrs...)
			c.sess = nil // its state is unknown: do not reuse it
			r.nconns--
			r.stats.conns.Store(int64(r.nconns))
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
				c.rbuf = reactor.Grow(c.rbuf, size)
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
	if pending := len(c.out) - c.woff; reactor.ShouldSend(pending, c.more) && !r.write(c) {
		return
	}
	r.rearm(c)
}

// write sends as much of c's pending replies as the socket takes. It returns
// false if c was closed.
func (r *loop) write(c *conn) bool {
	for c.woff < len(c.out) {
		n, err := writeNonblock(c.fd, c.out[c.woff:])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				c.wblocked = true
				return true
			}
			r.closeConn(c)
			return false
		}
		c.woff += n
		r.stats.bytesWritten.Add(uint64(n))
	}
	c.wblocked = false
	if c.out != nil {
		r.pools.PutWrite(c.out)
		c.out, c.woff = nil, 0
	}
	return true
}

// rearm closes c when it is done, queues it for another turn when it has
// requests left, and registers the epoll events it now needs: input while
// the backlog of replies is under reactor.MaxUnsent, output while a write is stuck.
func (r *loop) rearm(c *conn) {
	if c.fd < 0 {
		return
	}
	if c.closing && !c.wblocked && len(c.out) > c.woff && !r.write(c) {
		return // replies kept back for a yielded turn go out before the close
	}
	pending := len(c.out) - c.woff
	if pending == 0 && c.closing {
		r.closeConn(c)
		return
	}
	blocked := reactor.ReadPaused(pending)
	if c.wakeLater && !blocked {
		c.wakeLater, c.more = false, true
	}
	if c.more && !blocked && !c.queued {
		c.queued = true
		r.yields = append(r.yields, c)
	}
	switch {
	case c.wblocked:
		c.state.Store(int32(reactor.StateWriting))
	case !c.more && c.state.Load() != int32(reactor.StateNew):
		c.state.Store(int32(reactor.IdleState(c.sess)))
	}
	// Input stays armed while requests are buffered (more): dropping and
	// re-adding it would cost two epoll_ctl calls per yield; connEvent
	// leaves such connections to runYields.
	var want uint32
	if !c.eof && !c.closing && !blocked {
		want = unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if c.wblocked {
		want |= unix.EPOLLOUT
	}
	if want == c.interest {
		return
	}
	ev := unix.EpollEvent{Events: want, Fd: int32(c.fd), Pad: c.slot}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		r.closeConn(c)
		return
	}
	c.interest = want
}
