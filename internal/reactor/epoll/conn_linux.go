//go:build linux

package epoll

import (
	"errors"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/rawloop"
	"golang.org/x/sys/unix"
)

// connIO is the epoll engine's own state of a connection.
type connIO struct {
	interest uint32 // registered epoll events
	wblocked bool   // the last write stopped at EAGAIN: wait for EPOLLOUT
	readFull bool   // the last read filled the buffer: more is likely waiting
}

// conn is one client connection, owned by one reactor.
type conn = rawloop.Conn[connIO]

// Opened registers a connection the core just added with the epoll set.
func (r *loop) Opened(c *conn) {
	c.IO.interest = unix.EPOLLIN | unix.EPOLLRDHUP
	ev := unix.EpollEvent{Events: c.IO.interest, Fd: int32(c.FD), Pad: c.Slot}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, c.FD, &ev); err != nil {
		r.eng.LogAcceptError(err)
		r.CloseConn(c)
		return
	}
	if c.Closing { // draining
		r.Rearm(c)
	}
}

// Closing has nothing to end: closing the descriptor takes it out of the
// epoll set.
func (r *loop) Closing(*conn) {}

// Unsent is the part of c's replies not yet written.
func (r *loop) Unsent(c *conn) int { return len(c.Out) - c.Sent + c.RefLeft }

// Turned sends every reply a turn produced with one write.
func (r *loop) Turned(c *conn) {
	if reactor.ShouldSend(r.Unsent(c), c.More) && !r.write(c) {
		return
	}
	r.Rearm(c)
}

func (r *loop) connEvent(c *conn, events uint32) {
	// A hangup is a peer gone both ways: a unix socket's close says so at
	// once (TCP's close says RDHUP). What it sent first is still to be read
	// and served, as memcached serves it, so only an error, or a hangup on
	// a connection that no longer reads, closes here.
	if events&unix.EPOLLERR != 0 || events&unix.EPOLLHUP != 0 && c.IO.interest&unix.EPOLLIN == 0 && !c.More {
		if events&unix.EPOLLERR != 0 || !c.EOF { // else its EOF was read: an orderly close
			reactor.NoteClose(c.Sess, reactor.CloseReasonError)
		}
		r.CloseConn(c)
		return
	}
	if events&unix.EPOLLOUT != 0 {
		if !r.write(c) {
			return
		}
	}
	// A connection with buffered requests (More) gets its turn in RunYields.
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP) != 0 && c.IO.interest&unix.EPOLLIN != 0 && !c.More {
		// A read that filled the buffer likely left more in the socket (a
		// large value arriving): read on, up to maxReadTurns buffers, rather
		// than go back through epoll_wait for each 16 KiB, as memcached
		// reads a value on until EAGAIN. A connection that yields, stops
		// reading or has replies stuck gets no extra turn.
		for turn := 1; ; turn++ {
			if !r.read(c) {
				return
			}
			full := c.IO.readFull
			r.Process(c)
			if !full || turn >= maxReadTurns || c.FD < 0 || c.More || c.Closing || c.EOF ||
				c.IO.wblocked || c.IO.interest&unix.EPOLLIN == 0 {
				return
			}
		}
	}
	r.Rearm(c)
}

// maxReadTurns bounds the reads one readiness event gets when each fills
// the buffer: 16 of 16 KiB, a quarter MiB, before other connections' turn.
const maxReadTurns = 16

// read does one read into c's buffer. It returns false if c was closed.
func (r *loop) read(c *conn) bool {
	if c.In == nil {
		c.In = r.Pools.Read()
	}
	if size := reactor.ReadBufCap(cap(c.In), len(c.In), 0); size > cap(c.In) {
		c.In = reactor.Grow(c.In, size)
	}
	n, err := readNonblock(c.FD, c.In[len(c.In):cap(c.In)])
	c.IO.readFull = err == nil && n == cap(c.In)-len(c.In)
	switch {
	case err == nil && n > 0:
		c.In = c.In[:len(c.In)+n]
		r.Stats.BytesRead.Add(uint64(n))
	case err == nil:
		c.EOF = true
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		// Level-triggered: epoll reports the socket again if it is still readable.
	default:
		reactor.NoteClose(c.Sess, reactor.CloseReasonError)
		r.CloseConn(c)
		return false
	}
	return true
}

// write sends as much of c's pending replies as the socket takes. It returns
// false if c was closed.
func (r *loop) write(c *conn) bool {
	for c.Sent < len(c.Out) || c.Refs != nil {
		var n int
		var err error
		if c.Refs == nil {
			n, err = writeNonblock(c.FD, c.Out[c.Sent:])
		} else {
			var iov [rawloop.MaxPieces]unix.Iovec
			n, err = writevNonblock(c.FD, iov[:c.Iovecs(&iov, c.Out, c.Sent)])
		}
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				c.IO.wblocked = true
				return true
			}
			r.CloseConn(c)
			return false
		}
		r.Stats.BytesWritten.Add(uint64(n))
		if c.Refs == nil {
			c.Sent += n
		} else {
			c.Wrote(c.Out, &c.Sent, n)
		}
	}
	c.IO.wblocked = false
	if c.Out != nil {
		r.Pools.PutWrite(c.Out)
		c.Out, c.Sent = nil, 0
	}
	return true
}

// Rearm closes c when it is done, queues it for another turn when it has
// requests left, and registers the epoll events it now needs: input while
// the backlog of replies is under reactor.MaxUnsent, output while a write
// is stuck.
func (r *loop) Rearm(c *conn) {
	if c.FD < 0 {
		return
	}
	if c.Closing && !c.IO.wblocked && r.Unsent(c) > 0 && !r.write(c) {
		return // replies kept back for a yielded turn go out before the close
	}
	pending := r.Unsent(c)
	if pending == 0 && c.Closing {
		r.CloseConn(c)
		return
	}
	blocked := r.Requeue(c, pending, c.IO.wblocked)
	// Input stays armed while requests are buffered (More): dropping and
	// re-adding it would cost two epoll_ctl calls per yield; connEvent
	// leaves such connections to RunYields.
	var want uint32
	if !c.EOF && !c.Closing && !blocked {
		want = unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if c.IO.wblocked {
		want |= unix.EPOLLOUT
	}
	if want == c.IO.interest {
		return
	}
	ev := unix.EpollEvent{Events: want, Fd: int32(c.FD), Pad: c.Slot}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_MOD, c.FD, &ev); err != nil {
		r.CloseConn(c)
		return
	}
	c.IO.interest = want
}
