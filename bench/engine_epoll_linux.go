package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

const (
	defaultEngine = EngineEpoll
	haveEpoll     = true
)

// maxWait bounds one epoll wait so cancellation is noticed promptly.
const maxWait = 50 * time.Millisecond

// econn is one connection of the epoll engine; its loop thread owns it.
type econn struct {
	fd    int
	rng   *rand.Rand
	next  int64     // open loop: the next scheduled send time
	fifo  []pending // ring of outstanding requests, len = depth
	head  int       // oldest outstanding request
	count int       // outstanding requests
	wbuf  []byte
	woff  int  // bytes of wbuf already written
	wantW bool // registered for EPOLLOUT
	rbuf  []byte
	dead  bool
	err   error

	sent, scheduled int64
	received        atomic.Int64 // read by the progress line
	stats           connStats
}

// eloop is one load thread: its connections, one epoll set, one OS thread.
type eloop struct {
	cfg    *Config
	ks     *KeySpace
	conns  []*econn
	ia     Distribution // nil: closed loop
	lag    *hdrhistogram.Histogram
	unsent int64
	stop   *atomic.Bool
}

func runEpoll(ctx context.Context, cfg *Config, ks *KeySpace, res *Result) error {
	// Each loop thread blocks in epoll_pwait2 holding its P; keep one for
	// the rest of the process.
	if prev, want := runtime.GOMAXPROCS(0), min(cfg.Threads+1, maxProcs); prev < want {
		runtime.GOMAXPROCS(want)
		defer runtime.GOMAXPROCS(prev)
	}
	var ia Distribution
	if cfg.QPS > 0 {
		var err error
		if ia, err = ScaleToMean(cfg.InterArrival, float64(time.Second)*float64(cfg.conns())/cfg.QPS); err != nil {
			return fmt.Errorf("inter-arrival: %w", err)
		}
	}
	var stop atomic.Bool
	loops := make([]*eloop, cfg.Threads)
	var all []*econn
	defer func() {
		for _, c := range all {
			unix.Close(c.fd)
		}
	}()
	for t := range loops {
		l := &eloop{cfg: cfg, ks: ks, ia: ia, lag: newLatencyHistogram(), stop: &stop}
		for range cfg.Connections {
			c, err := dialRaw(cfg, len(all))
			if err != nil {
				return err
			}
			all = append(all, c)
			l.conns = append(l.conns, c)
		}
		loops[t] = l
	}
	stopCancel := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer stopCancel()

	clk := clock{base: time.Now()}
	win := window{start: int64(cfg.Warmup), end: int64(cfg.Warmup + cfg.Time)}
	var wg sync.WaitGroup
	errs := make([]error, len(loops))
	for i, l := range loops {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = l.run(clk, win) }()
	}
	stopProgress := startProgress(cfg, func() int64 {
		var n int64
		for _, c := range all {
			n += c.received.Load()
		}
		return n
	}, clk, win)
	wg.Wait()
	stopProgress()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	outs := make([]outcome, len(all))
	for i, c := range all {
		outs[i] = outcome{stats: &c.stats, sent: c.sent, received: c.received.Load(), scheduled: c.scheduled, err: c.err}
	}
	var lags []*hdrhistogram.Histogram
	var unsent int64
	for _, l := range loops {
		if ia != nil {
			lags = append(lags, l.lag)
		}
		unsent += l.unsent
	}
	res.collect(outs, lags, unsent, cfg.Time)
	return nil
}

// dialRaw connects with the net package (timeouts, name resolution), then
// keeps a duplicate of the non-blocking socket for raw reads and writes.
func dialRaw(cfg *Config, index int) (*econn, error) {
	nc, err := net.DialTimeout("tcp", cfg.Server, cfg.DialTimeout)
	if err != nil {
		return nil, fmt.Errorf("connection %d: %w", index, err)
	}
	defer nc.Close()
	sc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := sc.Control(func(f uintptr) { fd, dupErr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, fmt.Errorf("connection %d: dup: %w", index, dupErr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &econn{
		fd:    fd,
		rng:   rand.New(rand.NewPCG(cfg.Seed, uint64(index)+1)),
		fifo:  make([]pending, cfg.Depth),
		rbuf:  make([]byte, 0, 64<<10),
		stats: connStats{get: newLatencyHistogram(), set: newLatencyHistogram()},
	}, nil
}

func (c *econn) fail(err error) {
	if !c.dead {
		c.dead, c.err = true, err
	}
}

// run is the thread's event loop: send what is due, wait for replies or
// the next send time, repeat; then drain until every request is answered
// or the drain deadline passes.
func (l *eloop) run(clk clock, win window) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	preparePacerThread() // epoll timeouts obey the thread's timer slack too
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	defer unix.Close(epfd)
	for i, c := range l.conns {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			return fmt.Errorf("epoll_ctl: %w", err)
		}
		if l.ia != nil {
			c.next = int64(Sample(l.ia, c.rng)) // a random phase per connection
		}
	}
	giveUp := win.end + int64(l.cfg.DrainTimeout)
	events := make([]unix.EpollEvent, len(l.conns))
	for !l.stop.Load() {
		now := clk.now()
		if now >= giveUp {
			break
		}
		wake, busy := giveUp, false
		for _, c := range l.conns {
			if c.dead {
				continue
			}
			l.send(c, now, win)
			l.setWantWrite(epfd, c)
			if c.count > 0 || l.owes(c, now, win) {
				busy = true
			}
			if l.ia != nil && c.next < win.end && c.count < len(c.fifo) {
				wake = min(wake, c.next)
			}
		}
		if !busy {
			break
		}
		if l.ia == nil && now < win.end {
			wake = min(wake, win.end)
		}
		wait := time.Duration(max(wake-clk.now(), 0))
		if wait <= l.cfg.Spin {
			wait = 0 // poll: busy-wait the last stretch before a send
		}
		n, err := epollPwait2(epfd, events, min(wait, maxWait))
		if err != nil {
			return fmt.Errorf("epoll_pwait2: %w", err)
		}
		at := clk.now()
		for _, ev := range events[:n] {
			c := l.conns[ev.Fd]
			if c.dead {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				l.flush(c)
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.receive(c, at, win)
			}
		}
	}
	if l.stop.Load() {
		for _, c := range l.conns {
			c.fail(errors.New("cancelled"))
		}
	}
	if l.ia != nil {
		for _, c := range l.conns {
			for t := c.next; t < win.end; t += l.gap(c) {
				if win.holds(t) {
					l.unsent++
				}
			}
		}
	}
	return nil
}

// owes reports whether c still has requests to send.
func (l *eloop) owes(c *econn, now int64, win window) bool {
	if l.ia != nil {
		return c.next < win.end
	}
	return now < win.end
}

func (l *eloop) gap(c *econn) int64 { return max(int64(Sample(l.ia, c.rng)), 1) }

// send queues every request of c that is due and has a pipeline slot, and
// writes them.
func (l *eloop) send(c *econn, now int64, win window) {
	if c.woff < len(c.wbuf) {
		return // the socket is full; EPOLLOUT resumes the write
	}
	c.wbuf, c.woff = c.wbuf[:0], 0
	for c.count < len(c.fifo) {
		var sched int64
		if l.ia != nil {
			if c.next > now || c.next >= win.end {
				break
			}
			sched = c.next
			c.next += l.gap(c)
			if win.holds(sched) {
				_ = l.lag.RecordValue(min(max(now-sched, 1), maxLatency))
			}
		} else {
			if now >= win.end {
				break
			}
			sched = now
		}
		l.enqueue(c, sched, win)
	}
	l.flush(c)
}

func (l *eloop) enqueue(c *econn, sched int64, win window) {
	key := c.rng.IntN(l.ks.Records())
	p := pending{sched: sched, set: l.cfg.Update > 0 && c.rng.Float64() < l.cfg.Update}
	if p.set {
		c.wbuf = AppendSet(c.wbuf, l.ks, key, clampSize(Sample(l.cfg.ValueSize, c.rng), 0, l.cfg.MaxValue))
	} else {
		c.wbuf = AppendMultiGet(c.wbuf, l.ks, key, l.cfg.MultiGet, c.rng)
	}
	c.fifo[(c.head+c.count)%len(c.fifo)] = p
	c.count++
	c.sent++
	if win.holds(sched) {
		c.scheduled++
	}
}

// flush writes as much of the buffer as the socket takes.
func (l *eloop) flush(c *econn) {
	for c.woff < len(c.wbuf) {
		n, err := unix.Write(c.fd, c.wbuf[c.woff:])
		if err == unix.EAGAIN {
			return
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			c.fail(fmt.Errorf("write: %w", err))
			return
		}
		c.woff += n
	}
}

// setWantWrite keeps EPOLLOUT registered exactly while a write is pending.
func (l *eloop) setWantWrite(epfd int, c *econn) {
	want := !c.dead && c.woff < len(c.wbuf)
	if want == c.wantW {
		return
	}
	for i, cc := range l.conns {
		if cc == c {
			ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
			if want {
				ev.Events |= unix.EPOLLOUT
			}
			if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
				c.fail(fmt.Errorf("epoll_ctl: %w", err))
			}
			c.wantW = want
			return
		}
	}
}

// receive reads what the socket holds and matches complete replies to the
// outstanding requests.
func (l *eloop) receive(c *econn, at int64, win window) {
	if len(c.rbuf) == cap(c.rbuf) {
		c.rbuf = append(c.rbuf, 0)[:len(c.rbuf)] // grow for a large value
	}
	n, err := unix.Read(c.fd, c.rbuf[len(c.rbuf):cap(c.rbuf)])
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		c.fail(fmt.Errorf("read: %w", err))
		return
	case n == 0:
		c.fail(errors.New("read: server closed the connection"))
		return
	}
	c.rbuf = c.rbuf[:len(c.rbuf)+n]
	off := 0
	for {
		kind, m, perr := ParseReply(c.rbuf[off:])
		if perr != nil {
			c.fail(perr)
			return
		}
		if m == 0 {
			break
		}
		off += m
		if c.count == 0 {
			c.fail(fmt.Errorf("%v reply to no request", kind))
			return
		}
		p := c.fifo[c.head]
		c.head = (c.head + 1) % len(c.fifo)
		c.count--
		if win.holds(p.sched) {
			c.stats.record(p, kind, at-p.sched)
		}
		c.received.Add(1)
	}
	c.rbuf = c.rbuf[:copy(c.rbuf, c.rbuf[off:])]
}

// epollPwait2 waits up to timeout (nanosecond resolution, unlike
// epoll_wait's milliseconds).
func epollPwait2(epfd int, events []unix.EpollEvent, timeout time.Duration) (int, error) {
	ts := unix.NsecToTimespec(int64(timeout))
	for {
		n, _, errno := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
			uintptr(len(events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if errno == unix.EINTR {
			return 0, nil
		}
		if errno != 0 {
			return 0, errno
		}
		return int(n), nil
	}
}
