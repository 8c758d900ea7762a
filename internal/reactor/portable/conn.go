package portable

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// conn is one client connection, served by its own goroutine. Only that
// goroutine touches the buffers and the Session; the atomics are read by
// `stats` from other connections.
type conn struct {
	e    *engine
	tls  *tls.Config       // non-nil: the client must speak TLS (set before serve starts)
	nc   net.Conn          // the socket: stats, deadlines and close use it
	tcp  syscall.RawConn   // nc's descriptor when nc is TCP (AckNow); nil for a unix socket
	rw   net.Conn          // requests and replies: nc, or the TLS connection over it
	refs reactor.RefSender // the Session, when its large values go out from the store (sendrefs.go)
	fd   int
	sess reactor.Session
	wake chan struct{} // a watching Session's wakeup (capacity 1)

	state        atomic.Int32 // a reactor.ConnState
	lastCmd      atomic.Int64 // unix seconds of the last request consumed
	bytesRead    atomic.Uint64
	bytesWritten atomic.Uint64
	yields       atomic.Uint64
}

func (c *conn) setState(s reactor.ConnState) { c.state.Store(int32(s)) }

// serve reads requests, hands them to the Session, and writes all replies
// produced from one read with one write, until the client leaves, the
// Session says Close, or Shutdown.
func (c *conn) serve() {
	defer c.e.release(c)
	c.rw = c.nc
	if c.tls != nil {
		if !c.handshake() {
			return
		}
		// An orderly TLS end: the close_notify alert before the FIN, as
		// memcached's SSL_shutdown sends. A client that finds the stream
		// cut without it (an idle kick, a quit) treats the connection as
		// broken and may write to it again, into a reset.
		defer c.rw.Close()
	}
	c.sess = c.e.sessions.Get().(reactor.Session)
	c.wake = make(chan struct{}, 1)
	c.sess.SetWakeup(c.signal)
	transport, peer := "tcp", netip.AddrPort{}
	switch a := c.nc.RemoteAddr().(type) {
	case *net.TCPAddr:
		peer = a.AddrPort()
		peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	case *net.UnixAddr:
		transport = "local"
	}
	c.sess.OpenedFrom(c.fd, transport, peer)
	c.sendRefs()
	if tc, ok := c.nc.(*net.TCPConn); ok {
		c.tcp, _ = tc.SyscallConn()
	}

	buf := make([]byte, reactor.ReadBufSize)
	var out []byte
	r, w := 0, 0 // unconsumed input is buf[r:w]
	lastReq := time.Now()
	for {
		if r == w {
			r, w = 0, 0
			if len(buf) > reactor.KeepBufMax { // idle again after a large value
				buf = make([]byte, reactor.ReadBufSize)
			}
		} else {
			buf, r, w = c.makeRoom(buf, r, w)
		}
		if idle := c.e.cfg.IdleTimeout; idle > 0 {
			// The clock runs from the last request consumed, memcached's
			// last_cmd_time, so a client dripping a line a byte at a time
			// is kicked too. One partway through a value is not kickable:
			// its deadline only comes round again. The test is memcached's
			// on whole seconds (elapsed seconds greater than the timeout),
			// as the other engines' sweeps make it: the deadline is the
			// start of the first second that passes it.
			deadline := time.Unix(lastReq.Unix()+int64(max(idle/time.Second, 1))+1, 0)
			if !reactor.Kickable(c.sess) {
				deadline = time.Now().Add(idle)
			}
			c.nc.SetReadDeadline(deadline)
		}
		n, err := c.rw.Read(buf[w:])
		if n > 0 {
			sentBefore := c.bytesWritten.Load()
			c.bytesRead.Add(uint64(n))
			c.setState(reactor.StateParsing)
			w += n
			var consumed int
			var st protocol.Status
			out, consumed, st = c.process(buf[r:w], out[:0])
			r += consumed
			for st != protocol.Close && c.sess.Waiting() {
				// A read from flash is in flight: its wakeup, not the
				// client, brings the rest of the replies.
				if len(out) > 0 && !c.write(out) {
					return
				}
				<-c.wake
				var more int
				out, more, st = c.process(buf[r:w], out[:0])
				r += more
				consumed += more
			}
			if consumed > 0 {
				lastReq = time.Now()
				c.lastCmd.Store(lastReq.Unix())
			}
			if len(out) > 0 && !c.write(out) {
				return
			}
			if reactor.AckWanted(c.tcp != nil, n, int(c.bytesWritten.Load()-sentBefore)) {
				c.ackNow()
			}
			if cap(out) > reactor.KeepBufMax {
				protocol.RecycleReply(out) // written whole: nothing reads it now
				out = nil
			}
			if st == protocol.Close || c.e.closed.Load() {
				return
			}
			if c.sess.Pending() { // became a log stream: it reads no more requests
				c.streamLog(out[:0])
				return
			}
			c.setState(reactor.IdleState(c.sess))
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && c.e.cfg.IdleTimeout > 0 && !c.e.closed.Load() {
				if !reactor.Kickable(c.sess) {
					continue // partway through a value: memcached waits for it
				}
				c.e.acct.IdleKick()
				reactor.NoteClose(c.sess, reactor.CloseReasonIdle)
				c.e.log.Debug("idle connection closed", "remote", c.nc.RemoteAddr(), "idle_timeout", c.e.cfg.IdleTimeout)
				return
			}
			if !errors.Is(err, io.EOF) && !c.e.closed.Load() {
				reactor.NoteClose(c.sess, reactor.CloseReasonError)
				c.countTLSError(err)
			}
			if c.e.log.Enabled(context.Background(), slog.LevelDebug) {
				c.e.log.Debug("connection closed", "remote", c.nc.RemoteAddr(), "err", err)
			}
			return
		}
	}
}

// tlsHandshakeTimeout bounds a TLS client's handshake, so a client that
// connects and says nothing cannot hold a goroutine forever.
const tlsHandshakeTimeout = 10 * time.Second

// tlsRecordHandshake is the first byte of every TLS client's first record.
const tlsRecordHandshake = 0x16

// handshake turns c into a TLS connection and completes the handshake
// before any request, counting failures as memcached's
// ssl_handshake_errors. A client whose first byte cannot start a TLS
// handshake (plain text on the TLS port) is closed at once, as with
// OpenSSL, instead of waiting for a record body that never comes.
func (c *conn) handshake() bool {
	raw := c.nc
	raw.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	var first [1]byte
	_, err := io.ReadFull(raw, first[:])
	if err == nil && first[0] != tlsRecordHandshake {
		err = errors.New("first byte is not a TLS handshake record")
	}
	var tc *tls.Conn
	if err == nil {
		tc = tls.Server(&prefixedConn{Conn: raw, first: first[:]}, c.tls)
		err = tc.Handshake()
	}
	raw.SetDeadline(time.Time{})
	if err != nil {
		// memcached counts failed TLS negotiations, not connections that
		// never started one (a port probe, plain text).
		if tc != nil && !c.e.closed.Load() {
			c.e.acct.TLSHandshakeError()
			c.e.log.Debug("TLS handshake failed", "remote", raw.RemoteAddr(), "err", err)
		}
		return false
	}
	c.rw = tc
	return true
}

// prefixedConn gives back the byte read to recognise a TLS client before
// the rest of the stream.
type prefixedConn struct {
	net.Conn
	first []byte
}

func (p *prefixedConn) Read(b []byte) (int, error) {
	if len(p.first) > 0 && len(b) > 0 {
		n := copy(b, p.first)
		p.first = p.first[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// process runs the Session over in until it needs more input or asks to
// close. Yield means the -R limit was hit: this engine has a goroutine per
// connection, so fairness is the scheduler's job; it counts the yield and
// goes on, sending early when the replies reach reactor.SendAtLeast. A
// Session with pending output (a value in chunks, a metadump) is called
// again once what it produced is written: the blocking write is this
// engine's flow control, so a client that stops reading stops the loop
// with at most one budget of replies in hand.
func (c *conn) process(in, out []byte) ([]byte, int, protocol.Status) {
	done := 0
	for {
		before := len(out)
		n, reply, st, err := reactor.RunSession(c.sess, in[done:], out)
		if err != nil {
			c.dropSession(err)
			return out[:0], done, protocol.Close
		}
		out = reply
		done += n
		produced := len(out) - before
		if refs := c.takeRefs(); refs != nil {
			// The call's large values go out now, in their places, before
			// the Session takes another call (it takes none until RefSent).
			ok := c.writeRefs(out, refs)
			out = out[:0]
			if !ok {
				return out, done, protocol.Close
			}
		}
		resume := st != protocol.Close && reactor.Resume(c.sess.Pending(), n, produced)
		if st == protocol.Yield {
			c.yields.Add(1)
			if n == 0 && !resume { // a Yield that made no progress would spin; wait for input
				return out, done, protocol.NeedMore
			}
		} else if !resume {
			return out, done, st
		}
		if reactor.ShouldSend(len(out), true) || resume && len(out) >= reactor.MaxUnsent {
			if !c.write(out) {
				return out[:0], done, protocol.Close
			}
			out = out[:0]
		}
	}
}

// ackNow acknowledges the client's bytes at once (reactor.AckNow): this
// read sends nothing that would carry the ACK.
func (c *conn) ackNow() {
	c.tcp.Control(func(fd uintptr) { reactor.AckNow(int(fd)) })
}

// signal is the Session's wakeup: it never blocks.
func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// streamLog serves a connection that became a `watch` log stream: memcached
// reads nothing more from it, so its input is discarded (a reader goroutine
// learns when the client leaves) while the Session's wakeups bring lines.
func (c *conn) streamLog(out []byte) {
	// A stream is not idle: memcached's idle_timeout leaves watchers alone.
	c.nc.SetReadDeadline(time.Time{})
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		var sink [512]byte
		for {
			if _, err := c.rw.Read(sink[:]); err != nil {
				return
			}
		}
	}()
	defer func() {
		c.nc.Close() // ends the reader if the stream ended first
		<-gone
	}()
	for {
		c.setState(reactor.IdleState(c.sess)) // conn_watch
		select {
		case <-c.wake:
		case <-gone:
			return
		case <-c.e.closedCh:
			return
		}
		var st protocol.Status
		out, _, st = c.process(nil, out[:0])
		if len(out) > 0 && !c.write(out) || st == protocol.Close {
			return
		}
	}
}

// dropSession logs a Session that panicked and forgets it: its state is
// unknown, so it is not reused.
func (c *conn) dropSession(err error) {
	reactor.LogSessionPanic(c.e.log, "session panicked; closing connection", err, "remote", c.nc.RemoteAddr())
	c.sess = nil
}

// makeRoom moves the unconsumed bytes to the front of buf and grows it as
// the shared policy says, so the next read has space and the request the
// Session waits for (Want) fits whole.
func (c *conn) makeRoom(buf []byte, r, w int) ([]byte, int, int) {
	pending := w - r
	if size := reactor.ReadBufCap(len(buf), pending, c.sess.Want()); size > len(buf) {
		grown := make([]byte, size)
		copy(grown, buf[r:w])
		return grown, 0, pending
	}
	if r > 0 {
		copy(buf, buf[r:w])
	}
	return buf, 0, pending
}

func (c *conn) write(out []byte) bool {
	c.setState(reactor.StateWriting)
	n, err := c.rw.Write(out)
	c.bytesWritten.Add(uint64(n))
	c.setState(reactor.StateParsing)
	if err != nil {
		c.e.log.Debug("write failed", "remote", c.nc.RemoteAddr(), "err", err)
		c.countTLSError(err)
		return false
	}
	return true
}

// countTLSError counts err as ssl_proto_errors when it is the TLS layer's.
func (c *conn) countTLSError(err error) {
	if c.tls != nil && isTLSProtoError(err) {
		c.e.acct.TLSProtoError()
	}
}

func (c *conn) totals() totals {
	return totals{
		bytesRead:    c.bytesRead.Load(),
		bytesWritten: c.bytesWritten.Load(),
		yields:       c.yields.Load(),
	}
}
