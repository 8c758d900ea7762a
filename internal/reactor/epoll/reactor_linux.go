//go:build linux

package epoll

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/probe"
	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// Epoll event tags (the Pad word of the event data): a connection's slot in
// loop.conns (>= 0), the mailbox, or listener i as tagListener0 - i.
const (
	tagMailbox   = -1
	tagListener0 = -2
)

// loop is one reactor: an epoll context driven by one goroutine locked to
// its OS thread. Everything below mu is touched only by that goroutine, except what
// mu guards (the connection table, read by `stats conns`/`stats reactors`) and
// the atomics in stats.
type loop struct {
	id      int
	eng     *engine
	epfd    int
	mailbox *reactor.Mailbox
	cpu     int // pinned CPU, -1 when unpinned

	busyPoll  bool              // params were applied and confirmed
	params    probe.EpollParams // as read back from the kernel
	paramsErr error             // the kernel lacks the ioctl: running without

	listeners []int // listening fds, -1 once closed
	groups    []int // listeners[i] belongs to eng.groups[groups[i]]

	napiID atomic.Uint32 // the NAPI this reactor serves, 0 until learned
	tid    atomic.Int32  // the locked thread's id once running
	stats  reactorCounters

	mu    sync.Mutex // guards conns against the stats reader; held for add/close only
	conns []*conn    // by slot; nil entries are free
	free  []int32    // free slots

	nconns     int
	draining   bool
	yields     []*conn // connections with unprocessed input, revisited after events
	yieldSpare []*conn
	handoffs   []reactor.Handoff
	wakes      []uint64 // connection wakeups taken from the mailbox
	gen        uint32   // last connection generation handed out
	now        int64    // unix seconds at the last wakeup
	nextSweep  int64    // unix seconds of the next idle_timeout sweep

	acceptPausedUntil time.Time // listeners out of the epoll set until then (EMFILE)

	pools reactor.LoopPools
}

func newReactor(e *engine, id int) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	r := &loop{id: id, eng: e, epfd: epfd, cpu: -1, pools: reactor.LoopPools{NewSession: e.cfg.NewSession, Worker: id}}
	if r.mailbox, err = reactor.NewMailbox(); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(r.mailbox.EventFD()), Pad: tagMailbox}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, r.mailbox.EventFD(), &ev); err != nil {
		r.release()
		return nil, fmt.Errorf("epoll_ctl eventfd: %w", err)
	}
	if cpus := e.ecfg.PinCPUs; len(cpus) > 0 {
		r.cpu = cpus[id%len(cpus)]
	}
	if ec := e.ecfg; ec.BusyPollUsecs > 0 || ec.PreferBusyPoll {
		want := probe.EpollParams{BusyPollUsecs: ec.BusyPollUsecs, BusyPollBudget: ec.BusyPollBudget,
			PreferBusyPoll: ec.PreferBusyPoll}
		got, err := applyEpollParams(epfd, want)
		switch {
		case err == nil:
			r.busyPoll, r.params = true, got
		case epollParamsUnsupported(err):
			r.paramsErr = err
		default:
			r.release()
			return nil, fmt.Errorf("epoll busy-poll params: %w", err)
		}
	}
	return r, nil
}

// addListener makes fd one of the reactor's listeners; the reactor owns it
// from here on, even when registering fails.
func (r *loop) addListener(fd, group int) error {
	li := len(r.listeners)
	r.listeners = append(r.listeners, fd)
	r.groups = append(r.groups, group)
	if fd < 0 {
		return nil // a slot held closed: another reactor accepts for the group
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd), Pad: int32(tagListener0 - li)}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl listener: %w", err)
	}
	return nil
}

// run is the reactor loop. The goroutine keeps its OS thread locked until it
// exits, so a pinned thread is discarded rather than reused.
func (r *loop) run() error {
	runtime.LockOSThread()
	r.tid.Store(int32(unix.Gettid()))
	if r.cpu >= 0 {
		var set unix.CPUSet
		set.Set(r.cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pin to CPU %d: %w", r.cpu, err)
		}
	}
	cfg := r.eng.ecfg
	events := make([]unix.EpollEvent, cfg.MaxEvents)
	// For stats reactors: when the last wait returned, whether it brought
	// events, and the busy-poll window a wait may spin before it sleeps.
	var lastWoke time.Time
	served := false
	window := time.Duration(r.params.BusyPollUsecs) * time.Microsecond
	var yielder reactor.Yielder
	for {
		started := time.Now()
		r.now = started.Unix()
		if r.eng.group.Quitting() && !r.draining {
			r.beginDrain()
		}
		if r.draining && (r.nconns == 0 || r.eng.group.Forced()) {
			break
		}
		timeout := cfg.TimeoutMs
		switch {
		case len(r.yields) > 0:
			timeout = 0
		case r.draining && (timeout < 0 || timeout > 50):
			timeout = 50 // look at force now and then
		}
		if due := r.resumeAcceptDue(); due >= 0 && (timeout < 0 || timeout > due) {
			timeout = due
		}
		timeout = r.idleWaitBound(timeout)
		n, err := unix.EpollWait(r.epfd, events, timeout)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("epoll_wait: %w", err)
		}
		woke := time.Now()
		r.now = woke.Unix()
		var busy time.Duration
		if !lastWoke.IsZero() {
			busy = started.Sub(lastWoke)
		}
		r.stats.noteWait(n, woke.Sub(started), busy, served, window)
		lastWoke, served = woke, n > 0
		r.stats.epollWaits.Add(1)
		switch {
		case n == 0:
			r.stats.emptyWaits.Add(1)
		case n == len(events):
			r.stats.fullBatches.Add(1)
		}
		if n > 0 {
			r.stats.events.Add(uint64(n))
			if uint64(n) > r.stats.maxBatch.Load() {
				r.stats.maxBatch.Store(uint64(n))
			}
		}
		for i := range events[:n] {
			r.dispatch(&events[i])
		}
		r.runYields()
		r.sweepIdle()
		// Here, not before the wait: a yield's hand-off must not count as
		// time asleep in epoll_wait (slept_waits, which --poll-mode auto
		// reads); it is part of the busy time instead.
		yielder.Maybe(woke)
	}
	r.closeAllConns()
	return nil
}

func (r *loop) dispatch(ev *unix.EpollEvent) {
	switch tag := ev.Pad; {
	case tag >= 0:
		if int(tag) >= len(r.conns) {
			return
		}
		if c := r.conns[tag]; c != nil && c.fd == int(ev.Fd) {
			r.connEvent(c, ev.Events)
		}
	case tag == tagMailbox:
		r.takeHandoffs()
	default:
		if !r.draining {
			r.accept(int(tagListener0 - tag))
		}
	}
}

// takeHandoffs adopts the connections other acceptors routed here.
func (r *loop) takeHandoffs() {
	r.handoffs = r.mailbox.Take(r.handoffs[:0])
	for _, h := range r.handoffs {
		if r.draining {
			unix.Close(h.FD)
			r.eng.acct.Release()
			continue
		}
		r.stats.handoffIn.Add(1)
		r.addConn(h.FD, h.NAPIID, h.Listener)
	}
	clear(r.handoffs)
	r.wakes = reactor.DeliverWakes(r.mailbox, r.wakes, r.conns, (*conn).generation, r.wakeConn)
}

// wakeConn gives a watching connection a turn to write its new lines,
// unless it already has one queued or is closing. While its client is not
// reading (the backlog is past reactor.MaxUnsent) the turn waits for the
// backlog to drain (rearm), so the lines stay in the watcher's own bounded
// buffer, which counts what it must drop, as memcached's does.
func (r *loop) wakeConn(c *conn) {
	switch {
	case c.fd < 0 || c.closing || c.queued:
	case reactor.ReadPaused(len(c.out) - c.woff):
		c.wakeLater = true
	default:
		c.queued = true
		r.yields = append(r.yields, c)
	}
}

func (c *conn) generation() uint32 { return c.gen }

// runYields gives every connection that hit -R another turn.
func (r *loop) runYields() {
	if len(r.yields) == 0 {
		return
	}
	list := r.yields
	r.yields = r.yieldSpare[:0]
	for _, c := range list {
		c.queued = false
		if c.fd >= 0 {
			r.process(c)
		}
	}
	clear(list)
	r.yieldSpare = list[:0]
}

// beginDrain stops accepting and ends every connection as if its client
// had shut its side (drainConn).
func (r *loop) beginDrain() {
	r.draining = true
	r.closeListeners()
	for _, c := range r.conns {
		if c != nil {
			r.drainConn(c)
		}
	}
	r.takeHandoffs()
}

// drainConn ends c when the server stops (reactor.DrainTurn): a turn in
// runYields while it has input or a reply to finish, process closing it
// when nothing is left; else it closes once its replies are written.
func (r *loop) drainConn(c *conn) {
	c.eof = true
	if reactor.DrainTurn(len(c.rbuf), c.sess) {
		c.more = true
	} else {
		c.closing, c.more = true, false
	}
	r.rearm(c)
}

func (r *loop) closeAllConns() {
	for _, c := range r.conns {
		if c != nil {
			r.closeConn(c)
		}
	}
}

// closeListeners stops r accepting. Under mu, like every close the stats
// reader could otherwise observe.
func (r *loop) closeListeners() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, fd := range r.listeners {
		if fd >= 0 {
			unix.Close(fd)
			r.listeners[i] = -1
		}
	}
}

// release frees the reactor's fds after its loop has ended (or never ran).
func (r *loop) release() {
	r.closeAllConns()
	r.closeListeners()
	if r.mailbox != nil {
		for _, h := range r.mailbox.Take(nil) {
			unix.Close(h.FD)
			r.eng.acct.Release()
		}
		r.mailbox.Close()
	}
	if r.epfd >= 0 {
		unix.Close(r.epfd)
		r.epfd = -1
	}
}
