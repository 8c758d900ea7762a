//go:build linux

package main

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gocached/gocached/bench/floor"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/uring/uringsys"
	"golang.org/x/sys/unix"
)

// The engine's ring and buffer sizes and setup flags
// (internal/reactor/uring: sqEntries, cqEntries, bufEntries, bufSize,
// reapBatch, ringFlags).
const (
	sqEntries  = 512
	cqEntries  = 8192
	bufEntries = 256
	bufSize    = reactor.ReadBufSize
	reapBatch  = 256
	bufGroup   = 0
	ringFlags  = uringsys.SetupSingleIssuer | uringsys.SetupDeferTaskrun | uringsys.SetupSubmitAll | uringsys.SetupRDisabled
)

// Operation kinds, in the top byte of user_data; the rest is the fd. A
// connection's fd is closed only when none of its operations is in
// flight, so a completion never meets a reused fd.
const (
	kindRecv uint64 = iota + 1
	kindSend
	kindAccept
)

// conn is one client. Replies go out from sending while out collects the
// next ones, as the engine's two buffers do.
type conn struct {
	floor.Requests
	fd        int
	out       []byte
	sending   []byte // the in-flight send's buffer; sending[soff:] not yet sent
	soff      int
	recvArmed bool
	sendBusy  bool
	drained   bool // the last receive did not fill its buffer
	eof       bool // the client closed, or a receive or send failed
	dirty     bool // on the send list
}

// server is the one loop's state, touched by its thread only.
type server struct {
	ring  *uringsys.Ring
	bufs  *uringsys.BufRing
	lfd   int
	conns map[int]*conn
	dirty []*conn
	cqes  []uringsys.CQE
	// listening is false once the multishot accept ended with an error
	// (the listener was shut down): serve then returns.
	listening bool
}

// serve runs the loop on the calling goroutine, locked to its thread (the
// ring's single issuer), until the listener is shut down; it closes the
// connections still open.
func serve(lfd int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ring, err := uringsys.NewRing(sqEntries, cqEntries, ringFlags)
	if err != nil {
		return fmt.Errorf("io_uring_setup: %w", err)
	}
	defer ring.Close()
	bufs, err := uringsys.NewBufRing(bufEntries, bufSize, bufGroup)
	if err != nil {
		return err
	}
	defer bufs.Free()
	if err := bufs.Register(ring.FD()); err != nil {
		return fmt.Errorf("IORING_REGISTER_PBUF_RING: %w", err)
	}
	if err := ring.Enable(); err != nil {
		return fmt.Errorf("enable ring: %w", err)
	}
	ring.RegisterRingFD()
	s := &server{ring: ring, bufs: bufs, lfd: lfd, conns: map[int]*conn{}, cqes: make([]uringsys.CQE, reapBatch), listening: true}
	defer s.closeAll()
	s.armAccept()
	busy := false
	for s.listening {
		s.flushSends()
		bufs.Publish()
		if _, err := ring.SubmitAndWait(-1, busy); err != nil {
			return fmt.Errorf("io_uring_enter: %w", err)
		}
		busy = s.reapAll() > 0
	}
	return bufs.Unregister(ring.FD())
}

func (s *server) sqe() *uringsys.SQE {
	q := s.ring.GetSQE()
	if q == nil {
		panic("uringfloor: the kernel takes no submissions")
	}
	return q
}

func (s *server) armAccept() {
	q := s.sqe()
	q.Opcode, q.FD, q.IOPrio = uringsys.OpAccept, int32(s.lfd), uringsys.AcceptMultishot
	q.OpFlags = unix.SOCK_CLOEXEC
	q.UserData = kindAccept << 56
}

// reapAll handles every completion there is, a batch at a time, and
// returns how many it handled.
func (s *server) reapAll() int {
	total := 0
	for range cqEntries/reapBatch + 1 {
		n := s.ring.Reap(s.cqes)
		total += n
		for i := range s.cqes[:n] {
			s.dispatch(&s.cqes[i])
		}
		if n < len(s.cqes) {
			break
		}
	}
	return total
}

func (s *server) dispatch(q *uringsys.CQE) {
	kind, fd := q.UserData>>56, int(q.UserData&0xffffffff)
	switch kind {
	case kindAccept:
		s.onAccept(q)
	case kindRecv:
		s.onRecv(s.conns[fd], q)
	case kindSend:
		s.onSend(s.conns[fd], q)
	}
}

func (s *server) onAccept(q *uringsys.CQE) {
	if q.Flags&uringsys.CQEFMore == 0 {
		if q.Res < 0 {
			s.listening = false // shut down (or failed): accept no more
		} else {
			s.armAccept()
		}
	}
	if q.Res < 0 {
		return
	}
	fd := int(q.Res)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c := &conn{fd: fd}
	s.conns[fd] = c
	s.armRecv(c)
}

func (s *server) armRecv(c *conn) {
	q := s.sqe()
	q.Opcode, q.FD, q.Flags, q.BufGroup = uringsys.OpRecv, int32(c.fd), uringsys.SQEBufferSelect, bufGroup
	if c.drained {
		q.IOPrio = uringsys.RecvPollFirst
	}
	q.UserData = kindRecv<<56 | uint64(c.fd)
	c.recvArmed = true
}

func (s *server) onRecv(c *conn, q *uringsys.CQE) {
	c.recvArmed = false
	c.drained = q.Res > 0 && int(q.Res) < bufSize
	switch {
	case q.Res > 0:
		c.out = c.Answer(s.bufs.Buf(uint16(q.Flags>>uringsys.CQEBufferShift), int(q.Res)), c.out)
	case q.Res == -int32(unix.ENOBUFS): // every buffer in flight: try again
	default: // 0 (the client closed) or an error
		c.eof = true
	}
	if q.Flags&uringsys.CQEFBuffer != 0 {
		s.bufs.Recycle(uint16(q.Flags >> uringsys.CQEBufferShift))
	}
	if c.eof {
		s.maybeClose(c)
		return
	}
	if len(c.out) > 0 {
		s.markDirty(c)
	}
	s.armRecv(c)
}

func (s *server) markDirty(c *conn) {
	if !c.dirty {
		c.dirty = true
		s.dirty = append(s.dirty, c)
	}
}

// flushSends queues one send per connection with replies: all of a turn's
// replies go out in one send, in the turn's one io_uring_enter.
func (s *server) flushSends() {
	for _, c := range s.dirty {
		c.dirty = false
		if c.eof || c.sendBusy || len(c.out) == 0 {
			continue
		}
		c.sending, c.out, c.soff = c.out, c.sending[:0], 0
		s.armSend(c)
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
}

func (s *server) armSend(c *conn) {
	p := c.sending[c.soff:]
	q := s.sqe()
	q.Opcode, q.FD = uringsys.OpSend, int32(c.fd)
	q.Addr, q.Len = uint64(uintptr(unsafe.Pointer(&p[0]))), uint32(len(p))
	q.OpFlags = unix.MSG_NOSIGNAL
	q.UserData = kindSend<<56 | uint64(c.fd)
	c.sendBusy = true
}

func (s *server) onSend(c *conn, q *uringsys.CQE) {
	c.sendBusy = false
	switch {
	case q.Res == -int32(unix.EINTR) || q.Res == -int32(unix.EAGAIN):
		s.armSend(c)
		return
	case q.Res < 0:
		c.eof = true
	default:
		c.soff += int(q.Res)
		if c.soff < len(c.sending) { // short: the rest first
			s.armSend(c)
			return
		}
	}
	if c.eof {
		s.maybeClose(c)
		return
	}
	if len(c.out) > 0 {
		s.markDirty(c)
	}
}

// maybeClose closes an ended connection once none of its operations is in
// flight.
func (s *server) maybeClose(c *conn) {
	if c.recvArmed || c.sendBusy {
		return
	}
	unix.Close(c.fd)
	delete(s.conns, c.fd)
}

// closeAll closes the connections left when serve returns.
func (s *server) closeAll() {
	for fd := range s.conns {
		unix.Close(fd)
	}
}
