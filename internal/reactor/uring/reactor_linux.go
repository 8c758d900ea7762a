//go:build linux

package uring

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/rawloop"
	"github.com/gocached/gocached/internal/reactor/uring/uringsys"
	"golang.org/x/sys/unix"
)

// Ring and buffer sizes per reactor. The SQ holds one loop iteration's
// submissions (a send per connection that replied, re-armed receives); a
// full SQ is submitted early, so the size bounds a batch, not the number of
// connections. The CQ is larger because every receive and multishot accept
// may post while the reactor works; the kernel keeps overflowed CQEs
// (IORING_FEAT_NODROP) until the next enter.
const (
	sqEntries  = 512
	cqEntries  = 8192
	bufEntries = 256                   // provided receive buffers: at most 4 MiB resident per reactor
	bufSize    = reactor.ReadBufSize   // each; a receive never returns more
	reapBatch  = 256                   // CQEs handled per pass over the CQ
	bufGroup   = 0                     // the one buffer group of each ring
	drainPoll  = 50 * time.Millisecond // how often a draining reactor looks at force

)

// recvBuffers is the buffer ring's size; a variable so tests can make the
// ring run dry.
var recvBuffers = bufEntries

// Operation kinds, in the top byte of user_data; conn operations carry the
// connection's slot (24 bits) and generation (32 bits), so a completion for
// a connection that is gone is recognised and dropped.
const (
	kindRecv uint8 = iota + 1
	kindSend
	kindAccept
	kindMailbox
	kindCancel
)

func userData(kind uint8, slot int32, gen uint32) uint64 {
	return uint64(kind)<<56 | uint64(uint32(slot)&0xffffff)<<32 | uint64(gen)
}

// loop is one reactor: a ring driven by one goroutine locked to its OS
// thread, which is the ring's single issuer. The connection bookkeeping is
// the shared rawloop.Loop; this type adds the ring, its buffers and the
// ring's counters. Everything is touched by the loop's goroutine only,
// except the atomics.
type loop struct {
	*rawloop.Loop[connIO]
	eng  *engine
	ring *uringsys.Ring
	bufs *uringsys.BufRing

	napi           napiState   // as the kernel reported it after registering
	napiErr        error       // the kernel has no io_uring NAPI busy polling
	napiAdded      uint32      // NAPI ID added to static tracking
	registeredRing atomic.Bool // io_uring_enter uses the registered ring index (read by stats)
	exited         bool        // run has returned: no more SQEs

	stats ringCounters

	liveAccepts int     // multishot accepts armed
	dirty       []*conn // connections with replies to send this iteration
	cqes        []uringsys.CQE
	ins         [][]byte // prefetchInputs' list, kept between batches
}

// newReactor builds reactor id on the shared core.
func (e *engine) newReactor(id int) (*loop, error) {
	core, err := rawloop.NewLoop(e.Group, id, e.cfg.Epoll.PinCPUs, e.cfg.NewSession)
	if err != nil {
		return nil, err
	}
	r := &loop{Loop: core, eng: e, cqes: make([]uringsys.CQE, reapBatch)}
	core.SetIO(r)
	if r.ring, err = uringsys.NewRing(sqEntries, cqEntries, ringFlags); err != nil {
		return nil, describeSetupError(err)
	}
	if r.bufs, err = uringsys.NewBufRing(recvBuffers, bufSize, bufGroup); err != nil {
		r.release()
		return nil, err
	}
	if err := r.bufs.Register(r.ring.FD()); err != nil {
		r.release()
		return nil, fmt.Errorf("IORING_REGISTER_PBUF_RING (Linux 5.19+): %w", err)
	}
	ec := &e.cfg.Epoll
	r.napi.tracking = uringsys.NAPITrackInactive
	if ec.BusyPollUsecs > 0 || ec.PreferBusyPoll {
		r.napi, err = registerNAPI(r.ring, ec.BusyPollUsecs, ec.PreferBusyPoll)
		switch {
		case err == nil:
		case napiUnsupported(err):
			r.napiErr = err
			if id == 0 {
				slog.Warn("uring: kernel has no io_uring NAPI busy polling (IORING_REGISTER_NAPI, Linux 6.9+); running without", "err", err)
			}
		default:
			r.release()
			return nil, fmt.Errorf("IORING_REGISTER_NAPI: %w", err)
		}
	}
	return r, nil
}

// run is the reactor loop: publish recycled buffers, submit the iteration's
// SQEs and wait in one io_uring_enter, reap completions in batches, give
// yielded connections their turn. The goroutine keeps its thread locked
// until it exits, so the ring's issuer thread is never reused.
func (r *loop) run() error {
	// Once run returns this thread is gone and with it the right to submit:
	// release, on another goroutine, must not queue SQEs.
	defer func() { r.exited = true }()
	if err := r.LockThread(); err != nil {
		return err
	}
	if err := r.ring.Enable(); err != nil {
		return fmt.Errorf("enable ring: %w", err)
	}
	r.registeredRing.Store(r.ring.RegisterRingFD())
	for i := range r.Listeners() {
		r.armAccept(i)
	}
	r.armMailbox()
	busy := false
	// No reactor.Yielder here: sysmon did not churn on this engine (100
	// wake-ups/s at 500 requests/s without the yield). A Gosched every 5 ms
	// once exposed the capped multishot receive's hang (see armRecv).
	for {
		r.Now = time.Now().Unix()
		if r.eng.Quitting() && !r.Draining {
			r.BeginDrain()
		}
		if forced := r.eng.Forced(); r.Done(forced) && (r.liveAccepts == 0 || forced) {
			break
		}
		r.resumeAccept()
		r.SweepIdle()
		r.flushSends()
		r.bufs.Publish()
		// A reactor that just had work waits raw, an idle one through the
		// runtime (see uringsys.Ring.SubmitAndWait).
		entered := time.Now()
		if _, err := r.ring.SubmitAndWait(r.waitTimeout(), busy); err != nil {
			return fmt.Errorf("io_uring_enter: %w", err)
		}
		woke := time.Now()
		// The clock of what the wait brings: a request's last_cmd time
		// read before a wait of up to a second would let the idle sweep
		// kick its client a second early.
		r.Now = woke.Unix()
		r.stats.waitNs.Add(uint64(woke.Sub(entered)))
		r.stats.enters.Add(1)
		busy = r.reapAll() > 0
		if !busy {
			r.stats.emptyEnters.Add(1)
		}
		r.RunYields()
	}
	r.CloseAllConns()
	r.closeListeners()
	_, _ = r.ring.SubmitAndWait(0, true) // hand the cancels over so sockets close now
	// No receive may pick a buffer once we return and the buffers are
	// unmapped: take the group away while this is still the issuer thread.
	_ = r.bufs.Unregister(r.ring.FD())
	return nil
}

// waitTimeout is how long the next io_uring_enter may sleep, in ns (-1: no limit).
func (r *loop) waitTimeout() int64 {
	t := int64(-1)
	if ms := r.eng.cfg.Epoll.TimeoutMs; ms > 0 {
		t = int64(ms) * int64(time.Millisecond)
	}
	limit := func(d time.Duration) {
		if t < 0 || int64(d) < t {
			t = max(int64(d), 0)
		}
	}
	if r.Yielded() {
		return 0
	}
	if r.Draining {
		limit(drainPoll)
	}
	if left, paused := r.AcceptPauseLeft(); paused {
		limit(left + time.Millisecond)
	}
	return int64(r.SweepBound(time.Duration(t)))
}

// reapAll handles every completion there is, a batch at a time; bounded,
// since handling one batch may let the kernel post more. It returns how
// many it handled.
func (r *loop) reapAll() int {
	total := 0
	for range cqEntries/reapBatch + 1 {
		n := r.ring.Reap(r.cqes)
		if n == 0 {
			return total
		}
		total += n
		r.stats.cqes.Add(uint64(n))
		if uint64(n) > r.stats.maxBatch.Load() {
			r.stats.maxBatch.Store(uint64(n))
		}
		r.prefetchInputs(r.cqes[:n])
		for i := range r.cqes[:n] {
			r.dispatch(&r.cqes[i])
		}
		if n < len(r.cqes) {
			return total
		}
	}
	return total
}

// prefetchInputs hands the data of a batch's receives to the store hint
// (reactor.Config.PrefetchInputs) before any is served: at depth 1 a batch
// holds one request from each of many connections.
func (r *loop) prefetchInputs(cqes []uringsys.CQE) {
	if r.eng.cfg.PrefetchInputs == nil {
		return
	}
	ins := r.ins[:0]
	for i := range cqes {
		q := &cqes[i]
		if uint8(q.UserData>>56) == kindRecv && q.Res > 0 && q.Flags&uringsys.CQEFBuffer != 0 {
			ins = append(ins, r.bufs.Buf(uint16(q.Flags>>uringsys.CQEBufferShift), int(q.Res)))
		}
	}
	if len(ins) > 1 {
		r.eng.cfg.PrefetchInputs(ins)
	}
	clear(ins)
	r.ins = ins[:0]
}

func (r *loop) dispatch(q *uringsys.CQE) {
	switch kind := uint8(q.UserData >> 56); kind {
	case kindRecv, kindSend:
		c := r.connFor(q.UserData)
		if c == nil {
			if q.Flags&uringsys.CQEFBuffer != 0 { // never leak a buffer
				r.bufs.Recycle(uint16(q.Flags >> uringsys.CQEBufferShift))
			}
			return
		}
		if kind == kindRecv {
			r.onRecv(c, q)
		} else {
			r.onSend(c, q)
		}
	case kindAccept:
		r.onAccept(int((q.UserData>>32)&0xffffff), q)
	case kindMailbox:
		if q.Flags&uringsys.CQEFMore == 0 && !r.Draining {
			r.armMailbox()
		}
		r.TakeHandoffs()
	}
}

func (r *loop) connFor(ud uint64) *conn {
	if c := r.ConnAt(int((ud >> 32) & 0xffffff)); c != nil && c.Gen == uint32(ud) {
		return c
	}
	return nil
}

// sqe returns the next SQE, or nil when the SQ is full and the kernel takes
// nothing from it; the caller then skips the operation (a receive or send
// is retried by the next Rearm, and the loop's own enter reports the error).
func (r *loop) sqe() *uringsys.SQE {
	if r.exited {
		return nil
	}
	s := r.ring.GetSQE()
	if s != nil {
		r.stats.sqes.Add(1)
	}
	return s
}

func (r *loop) armAccept(li int) {
	l := &r.Listeners()[li]
	if l.FD < 0 || l.Armed {
		return
	}
	s := r.sqe()
	if s == nil {
		return
	}
	s.Opcode, s.FD, s.IOPrio = uringsys.OpAccept, int32(l.FD), uringsys.AcceptMultishot
	s.OpFlags = unix.SOCK_CLOEXEC
	s.UserData = userData(kindAccept, int32(li), 0)
	l.Armed = true
	r.liveAccepts++
}

func (r *loop) armMailbox() {
	if s := r.sqe(); s != nil {
		s.Opcode, s.FD, s.Len, s.OpFlags = uringsys.OpPollAdd, int32(r.Mailbox.EventFD()), uringsys.PollAddMulti, unix.POLLIN
		s.UserData = userData(kindMailbox, 0, 0)
	}
}

// cancel asks the kernel to end the operation with user data ud.
func (r *loop) cancel(ud uint64) {
	if s := r.sqe(); s != nil {
		s.Opcode, s.FD, s.Addr = uringsys.OpAsyncCancel, -1, ud
		s.UserData = userData(kindCancel, 0, 0)
	}
}

// StopAccepting takes the listeners' queued connections, then closes the
// listeners, when the reactor starts draining.
func (r *loop) StopAccepting() {
	r.acceptBacklog()
	r.closeListeners()
}

// closeListeners cancels the accepts and closes the listening fds. The
// socket itself closes when its accept request ends (the request holds a
// reference), which the draining loop waits for.
func (r *loop) closeListeners() {
	r.CloseListeners(func(i int, l *rawloop.Listener) {
		if l.Armed && !r.exited {
			r.cancel(userData(kindAccept, int32(i), 0))
		}
	})
}

// release frees what the reactor holds after its loop ended (or never ran).
func (r *loop) release() {
	r.exited = true
	r.CloseAllConns()
	r.closeListeners()
	r.CloseMailbox()
	if r.ring != nil {
		r.ring.Close()
	}
	if r.bufs != nil {
		r.bufs.Free()
	}
}
