//go:build linux

package epoll

import (
	"errors"
	"fmt"
	"time"

	"github.com/gocached/gocached/internal/probe"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/rawloop"
	"golang.org/x/sys/unix"
)

// Epoll event tags (the Pad word of the event data): a connection's slot
// (>= 0), the mailbox, or listener i as tagListener0 - i.
const (
	tagMailbox   = -1
	tagListener0 = -2
)

// loop is one reactor: an epoll context driven by one goroutine locked to
// its OS thread. The connection bookkeeping is the shared rawloop.Loop;
// this type adds the epoll context and epoll's counters. Everything is
// touched only by the loop's goroutine, except the atomics.
type loop struct {
	*rawloop.Loop[connIO]
	eng  *engine
	epfd int

	busyPoll  bool              // params were applied and confirmed
	params    probe.EpollParams // as read back from the kernel
	paramsErr error             // the kernel lacks the ioctl: running without

	stats epollCounters
}

// newReactor builds reactor id on the shared core.
func (e *engine) newReactor(id int) (*loop, error) {
	core, err := rawloop.NewLoop(e.Group, id, e.ecfg.PinCPUs, e.cfg.NewSession)
	if err != nil {
		return nil, err
	}
	r := &loop{Loop: core, eng: e, epfd: -1}
	core.SetIO(r)
	if r.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		r.release()
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(r.Mailbox.EventFD()), Pad: tagMailbox}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, r.Mailbox.EventFD(), &ev); err != nil {
		r.release()
		return nil, fmt.Errorf("epoll_ctl eventfd: %w", err)
	}
	if ec := e.ecfg; ec.BusyPollUsecs > 0 || ec.PreferBusyPoll {
		want := probe.EpollParams{BusyPollUsecs: ec.BusyPollUsecs, BusyPollBudget: ec.BusyPollBudget,
			PreferBusyPoll: ec.PreferBusyPoll}
		got, err := applyEpollParams(r.epfd, want)
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
	li := r.AddListener(fd, group)
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
	if err := r.LockThread(); err != nil {
		return err
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
		r.Now = started.Unix()
		if r.eng.Quitting() && !r.Draining {
			r.BeginDrain()
		}
		if r.Done(r.eng.Forced()) {
			break
		}
		timeout := cfg.TimeoutMs
		switch {
		case r.Yielded():
			timeout = 0
		case r.Draining && (timeout < 0 || timeout > 50):
			timeout = 50 // look at force now and then
		}
		if due := r.resumeAcceptDue(); due >= 0 && (timeout < 0 || timeout > due) {
			timeout = due
		}
		if d := r.SweepBound(-1); d > 0 && (timeout < 0 || timeout > int(d/time.Millisecond)) {
			timeout = int(d / time.Millisecond)
		}
		n, err := unix.EpollWait(r.epfd, events, timeout)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("epoll_wait: %w", err)
		}
		woke := time.Now()
		r.Now = woke.Unix()
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
		r.RunYields()
		r.SweepIdle()
		// Here, not before the wait: a yield's hand-off must not count as
		// time asleep in epoll_wait (slept_waits, which --poll-mode auto
		// reads); it is part of the busy time instead.
		yielder.Maybe(woke)
	}
	r.CloseAllConns()
	return nil
}

func (r *loop) dispatch(ev *unix.EpollEvent) {
	switch tag := ev.Pad; {
	case tag >= 0:
		if c := r.ConnAt(int(tag)); c != nil && c.FD == int(ev.Fd) {
			r.connEvent(c, ev.Events)
		}
	case tag == tagMailbox:
		r.TakeHandoffs()
	default:
		if !r.Draining {
			r.accept(int(tagListener0 - tag))
		}
	}
}

// StopAccepting closes the listeners when the reactor starts draining
// (closing takes them out of the epoll set).
func (r *loop) StopAccepting() { r.CloseListeners(nil) }

// release frees the reactor's fds after its loop has ended (or never ran).
func (r *loop) release() {
	r.CloseAllConns()
	r.CloseListeners(nil)
	r.CloseMailbox()
	if r.epfd >= 0 {
		unix.Close(r.epfd)
		r.epfd = -1
	}
}
