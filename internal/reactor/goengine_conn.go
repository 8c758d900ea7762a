package reactor

import (
	"context"
	"log/slog"
	"net"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// Connection states as memcached names them in `stats conns`.
const (
	goStateWaiting int32 = iota // blocked reading: memcached's conn_new_cmd
	goStateParse                // handling a batch: conn_parse_cmd
	goStateWrite                // sending replies: conn_mwrite
)

var goStateNames = [...]string{
	goStateWaiting: "conn_new_cmd",
	goStateParse:   "conn_parse_cmd",
	goStateWrite:   "conn_mwrite",
}

// goConn is one client connection, served by its own goroutine. Only that
// goroutine touches the buffers and the Session; the atomics are read by
// `stats` from other connections.
type goConn struct {
	e        *goEngine
	nc       net.Conn
	listener *goListener
	fd       int
	sess     goSession

	state        atomic.Int32
	lastCmd      atomic.Int64 // unix seconds of the last request bytes
	bytesRead    atomic.Uint64
	bytesWritten atomic.Uint64
	yields       atomic.Uint64
}

// serve reads requests, hands them to the Session, and writes all replies
// produced from one read with one write, until the client leaves, the
// Session says Close, or Shutdown.
func (c *goConn) serve() {
	defer c.e.release(c)
	defer func() {
		// A bug in one connection's request handling must not take the
		// whole cache down: log it and drop just this connection.
		if r := recover(); r != nil {
			c.e.log.Error("connection handler panicked; closing connection",
				"remote", c.nc.RemoteAddr(), "panic", r, "stack", string(debug.Stack()))
		}
	}()
	c.sess = c.e.sessions.Get().(goSession)

	buf := make([]byte, goReadBufSize)
	var out []byte
	r, w := 0, 0 // unconsumed input is buf[r:w]
	for {
		if r == w {
			r, w = 0, 0
			if len(buf) > goReadBufSize { // idle again after a large value
				buf = make([]byte, goReadBufSize)
			}
		} else {
			buf, r, w = c.makeRoom(buf, r, w)
		}
		c.state.Store(goStateWaiting)
		n, err := c.nc.Read(buf[w:])
		if n > 0 {
			c.bytesRead.Add(uint64(n))
			c.lastCmd.Store(time.Now().Unix())
			c.state.Store(goStateParse)
			w += n
			var consumed int
			var st protocol.Status
			out, consumed, st = c.process(buf[r:w], out[:0])
			r += consumed
			if len(out) > 0 && !c.write(out) {
				return
			}
			if cap(out) > goKeepOutCap {
				out = nil
			}
			if st == protocol.Close || c.e.closed.Load() {
				return
			}
		}
		if err != nil {
			if c.e.log.Enabled(context.Background(), slog.LevelDebug) {
				c.e.log.Debug("connection closed", "remote", c.nc.RemoteAddr(), "err", err)
			}
			return
		}
	}
}

// process runs the Session over in until it needs more input or asks to
// close. Yield means the -R limit was hit: this engine has a goroutine per
// connection, so fairness is the scheduler's job; it counts the yield and
// goes on, writing early only when the replies grow large.
func (c *goConn) process(in, out []byte) ([]byte, int, protocol.Status) {
	done := 0
	for {
		n, reply, st := c.sess.Process(in[done:], out)
		out = reply
		done += n
		if st != protocol.Yield {
			return out, done, st
		}
		c.yields.Add(1)
		if n == 0 { // a Yield that made no progress would spin; wait for input
			return out, done, protocol.NeedMore
		}
		if len(out) >= goFlushThreshold {
			if !c.write(out) {
				return out[:0], done, protocol.Close
			}
			out = out[:0]
		}
	}
}

// makeRoom moves the unconsumed bytes to the front of buf and grows it so
// that the next read has space and the request the Session is waiting for
// (Want) fits whole.
func (c *goConn) makeRoom(buf []byte, r, w int) ([]byte, int, int) {
	pending := w - r
	need := max(c.sess.Want(), pending+1)
	if pending == len(buf) {
		need = max(need, 2*len(buf)) // full without a known size: double
	}
	if need > len(buf) {
		grown := make([]byte, goRoundUp(need, 4096))
		copy(grown, buf[r:w])
		return grown, 0, pending
	}
	if r > 0 {
		copy(buf, buf[r:w])
	}
	return buf, 0, pending
}

func goRoundUp(n, to int) int { return (n + to - 1) / to * to }

func (c *goConn) write(out []byte) bool {
	c.state.Store(goStateWrite)
	n, err := c.nc.Write(out)
	c.bytesWritten.Add(uint64(n))
	if err != nil {
		c.e.log.Debug("write failed", "remote", c.nc.RemoteAddr(), "err", err)
		return false
	}
	return true
}

func (c *goConn) totals() goTotals {
	return goTotals{
		bytesRead:    c.bytesRead.Load(),
		bytesWritten: c.bytesWritten.Load(),
		yields:       c.yields.Load(),
	}
}
