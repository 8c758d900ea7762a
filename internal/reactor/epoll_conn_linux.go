//go:build linux

package reactor

import (
	"errors"
	"log/slog"
	"runtime/debug"
	"sync/atomic"

	"github.com/gocached/gocached/internal/protocol"
	"golang.org/x/sys/unix"
)

const (
	// readBufSize is a connection's read buffer while its requests are small;
	// it grows to Session.Want() for large values and goes back to the pool
	// whenever it is empty, so idle connections hold no buffers.
	readBufSize = 16 << 10
	// maxPending is the unsent reply bytes beyond which a connection is no
	// longer read (nor its buffered requests processed) until it drains.
	maxPending = 4 << 20
	// Buffers up to poolBufMax are kept for reuse, at most poolDepth of each kind.
	poolBufMax = 64 << 10
	poolDepth  = 64
	// yieldFlushMin: a connection that yields under -R keeps its replies
	// for its next turn (so one pipelined read still goes out in one write)
	// unless this much is already waiting.
	yieldFlushMin = 64 << 10
)

// conn is one client connection, owned by one reactor.
type conn struct {
	fd       int // -1 once closed
	slot     int32
	listener int
	napiID   uint32 // at accept
	sess     sessionHandler

	rbuf []byte // unconsumed input in rbuf[:len]; nil when empty
	out  []byte // replies; out[woff:] is unsent; nil when all sent
	woff int

	interest uint32 // registered epoll events
	wblocked bool   // the last write stopped at EAGAIN: wait for EPOLLOUT
	more     bool   // Process yielded with complete requests left in rbuf
	queued   bool   // on the reactor's yield list
	eof      bool   // the peer closed its side; finish what was read
	closing  bool   // close once out is sent

	lastCmd atomic.Int64 // unix seconds of the last request, for `stats conns`
}

// addConn registers an accepted (or handed-over) connection.
func (r *reactor) addConn(fd int, napiID uint32, listener int) {
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
	c.sess = r.getSession()
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
func (r *reactor) closeConn(c *conn) {
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
		c.sess.Reset()
		if len(r.sessions) < poolDepth {
			r.sessions = append(r.sessions, c.sess)
		}
		c.sess = nil
	}
	r.putRbuf(c.rbuf)
	r.putWbuf(c.out)
	c.rbuf, c.out = nil, nil
	r.eng.curConns.Add(-1)
}

func (r *reactor) connEvent(c *conn, events uint32) {
	if events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		r.closeConn(c)
		return
	}
	if events&unix.EPOLLOUT != 0 {
		if !r.write(c) {
			return
		}
	}
	// A connection with buffered requests (more) gets its turn in runYields.
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP) != 0 && c.interest&unix.EPOLLIN != 0 && !c.more {
		if !r.read(c) {
			return
		}
		r.process(c)
		return
	}
	r.rearm(c)
}

// read does one read into c's buffer. It returns false if c was closed.
func (r *reactor) read(c *conn) bool {
	if c.rbuf == nil {
		c.rbuf = r.getRbuf()
	}
	if len(c.rbuf) == cap(c.rbuf) {
		c.rbuf = grow(c.rbuf, 2*cap(c.rbuf))
	}
	n, err := readNonblock(c.fd, c.rbuf[len(c.rbuf):cap(c.rbuf)])
	switch {
	case err == nil && n > 0:
		c.rbuf = c.rbuf[:len(c.rbuf)+n]
		r.stats.bytesRead.Add(uint64(n))
	case err == nil:
		c.eof = true
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		// Level-triggered: epoll reports the socket again if it is still readable.
	default:
		r.closeConn(c)
		return false
	}
	return true
}

// process runs the session over c's buffered input (up to -R requests),
// then sends every reply produced with one write.
func (r *reactor) process(c *conn) {
	c.more = false
	if len(c.rbuf) > 0 {
		if c.out == nil {
			c.out = r.getWbuf()
		}
		consumed, out, st, ok := r.callSession(c)
		if !ok {
			c.sess = nil // its state is unknown: do not reuse it
			r.nconns--
			r.stats.conns.Store(int64(r.nconns))
			r.closeConn(c)
			return
		}
		c.out = out
		c.lastCmd.Store(r.now)
		rest := copy(c.rbuf, c.rbuf[consumed:])
		c.rbuf = c.rbuf[:rest]
		switch st {
		case protocol.Yield:
			c.more = rest > 0
			r.stats.yields.Add(1)
		case protocol.Close:
			c.closing = true
			c.rbuf = c.rbuf[:0]
		default:
			if w := c.sess.Want(); w > cap(c.rbuf) {
				c.rbuf = grow(c.rbuf, w)
			}
		}
	}
	if c.eof && !c.more {
		c.closing = true // what is left can never complete
	}
	if len(c.rbuf) == 0 {
		r.putRbuf(c.rbuf)
		c.rbuf = nil
	}
	if pending := len(c.out) - c.woff; pending > 0 && (!c.more || pending >= yieldFlushMin) && !r.write(c) {
		return
	}
	r.rearm(c)
}

// callSession runs Process, turning a panic into the close of this one
// connection so that a protocol bug cannot take the whole server down.
func (r *reactor) callSession(c *conn) (consumed int, out []byte, st protocol.Status, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("reactor: session panicked; closing connection", "reactor", r.id, "fd", c.fd,
				"panic", p, "stack", string(debug.Stack()))
			ok = false
		}
	}()
	consumed, out, st = c.sess.Process(c.rbuf, c.out)
	return consumed, out, st, true
}

// write sends as much of c's pending replies as the socket takes. It returns
// false if c was closed.
func (r *reactor) write(c *conn) bool {
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
		r.putWbuf(c.out)
		c.out, c.woff = nil, 0
	}
	return true
}

// rearm closes c when it is done, queues it for another turn when it has
// requests left, and registers the epoll events it now needs: input while
// the backlog of replies is under maxPending, output while a write is stuck.
func (r *reactor) rearm(c *conn) {
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
	blocked := pending > maxPending
	if c.more && !blocked && !c.queued {
		c.queued = true
		r.yields = append(r.yields, c)
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

func grow(b []byte, size int) []byte {
	nb := make([]byte, len(b), size)
	copy(nb, b)
	return nb
}

func (r *reactor) getRbuf() []byte {
	if n := len(r.rbufs); n > 0 {
		b := r.rbufs[n-1]
		r.rbufs = r.rbufs[:n-1]
		return b
	}
	return make([]byte, 0, readBufSize)
}

// putRbuf keeps standard-size read buffers; grown ones go to the GC, which
// is how a buffer enlarged for one big value shrinks back.
func (r *reactor) putRbuf(b []byte) {
	if cap(b) == readBufSize && len(r.rbufs) < poolDepth {
		r.rbufs = append(r.rbufs, b[:0])
	}
}

func (r *reactor) getWbuf() []byte {
	if n := len(r.wbufs); n > 0 {
		b := r.wbufs[n-1]
		r.wbufs = r.wbufs[:n-1]
		return b
	}
	return make([]byte, 0, readBufSize)
}

func (r *reactor) putWbuf(b []byte) {
	if b != nil && cap(b) <= poolBufMax && len(r.wbufs) < poolDepth {
		r.wbufs = append(r.wbufs, b[:0])
	}
}

func (r *reactor) getSession() sessionHandler {
	if n := len(r.sessions); n > 0 {
		s := r.sessions[n-1]
		r.sessions = r.sessions[:n-1]
		return s
	}
	return r.eng.newSession()
}
