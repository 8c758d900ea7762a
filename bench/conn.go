package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// clock is monotonic nanoseconds since the run began.
type clock struct{ base time.Time }

func (c clock) now() int64 { return int64(time.Since(c.base)) }

// window is the measured interval [start, end) in clock nanoseconds.
// Requests count when their scheduled send time falls inside it.
type window struct{ start, end int64 }

func (w window) holds(t int64) bool { return t >= w.start && t < w.end }

// pending is a request that was sent and awaits its reply. Replies come
// back in request order, so a FIFO matches them up.
type pending struct {
	sched int64 // scheduled send time: latency is measured from here
	set   bool
}

// Latencies are recorded in nanoseconds, up to maxLatency.
const maxLatency = int64(100 * time.Second)

func newLatencyHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(1, maxLatency, 3) }

// connStats are one connection's counts for requests scheduled inside the
// window; the reader goroutine owns them.
type connStats struct {
	get, set      *hdrhistogram.Histogram
	gets, sets    int64
	hits, misses  int64
	errorReplies  int64
	firstErrReply string
}

func (s *connStats) record(p pending, kind ReplyKind, latency int64) {
	h := s.get
	if p.set {
		h, s.sets = s.set, s.sets+1
	} else {
		s.gets++
		switch kind {
		case ReplyHit:
			s.hits++
		case ReplyMiss:
			s.misses++
		}
	}
	if kind.IsError() || (p.set && kind != ReplyStored) || (!p.set && kind != ReplyHit && kind != ReplyMiss) {
		s.errorReplies++
		if s.firstErrReply == "" {
			s.firstErrReply = fmt.Sprintf("%v reply to a %s", kind, map[bool]string{true: "set", false: "get"}[p.set])
		}
	}
	_ = h.RecordValue(min(max(latency, 1), maxLatency))
}

// conn is one client connection: a writer (the pacer or the closed loop)
// sends, a reader goroutine matches replies to requests.
type conn struct {
	nc       net.Conn
	ks       *KeySpace
	cfg      *Config
	rng      *rand.Rand // used by the writer only
	slots    chan struct{}
	inflight chan pending
	wbuf     []byte
	win      window
	// scheduled counts requests sent whose schedule fell in the window;
	// the writer owns it.
	scheduled int64

	sent, received atomic.Int64
	finished       atomic.Bool
	dead           chan struct{} // closed when the reader stops

	mu  sync.Mutex
	err error // first failure

	stats connStats
}

func dialConn(cfg *Config, ks *KeySpace, seed uint64, index int) (*conn, error) {
	nc, err := net.DialTimeout("tcp", cfg.Server, cfg.DialTimeout)
	if err != nil {
		return nil, fmt.Errorf("connection %d: %w", index, err)
	}
	return &conn{
		nc:       nc,
		ks:       ks,
		cfg:      cfg,
		rng:      rand.New(rand.NewPCG(seed, uint64(index)+1)),
		slots:    make(chan struct{}, cfg.Depth),
		inflight: make(chan pending, cfg.Depth),
		dead:     make(chan struct{}),
		stats:    connStats{get: newLatencyHistogram(), set: newLatencyHistogram()},
	}, nil
}

// fail records the first error and closes the socket, which stops both sides.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.nc.Close()
}

func (c *conn) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *conn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// tryAcquire takes a pipeline slot if one is free.
func (c *conn) tryAcquire() bool {
	select {
	case c.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// enqueue appends the next request of the mix to the write buffer; the
// caller holds a slot for it.
func (c *conn) enqueue(sched int64) {
	key := c.rng.IntN(c.ks.Records())
	p := pending{sched: sched, set: c.cfg.Update > 0 && c.rng.Float64() < c.cfg.Update}
	if p.set {
		size := clampSize(Sample(c.cfg.ValueSize, c.rng), 0, c.cfg.MaxValue)
		c.wbuf = AppendSet(c.wbuf, c.ks, key, size)
	} else {
		c.wbuf = AppendMultiGet(c.wbuf, c.ks, key, c.cfg.MultiGet, c.rng)
	}
	c.inflight <- p // never blocks: the slot bounds inflight
	if c.win.holds(sched) {
		c.scheduled++
	}
	c.sent.Add(1)
}

// flush writes the buffered requests.
func (c *conn) flush() {
	if len(c.wbuf) == 0 {
		return
	}
	if _, err := c.nc.Write(c.wbuf); err != nil {
		c.fail(fmt.Errorf("write: %w", err))
	}
	c.wbuf = c.wbuf[:0]
}

// finish tells the reader no more requests come; replies still owed get
// the drain timeout.
func (c *conn) finish(drain time.Duration) {
	c.finished.Store(true)
	if c.received.Load() == c.sent.Load() {
		_ = c.nc.SetReadDeadline(time.Now()) // wake a reader blocked in Read
	} else {
		_ = c.nc.SetReadDeadline(time.Now().Add(drain))
	}
}

// done reports whether every sent request has its reply and none will follow.
func (c *conn) done() bool { return c.finished.Load() && c.received.Load() == c.sent.Load() }

// readLoop matches replies to requests until the writer has finished and
// everything is answered, the drain deadline passes, or the stream breaks.
func (c *conn) readLoop(clk clock, win window) {
	defer close(c.dead)
	buf := make([]byte, 0, 64<<10)
	for !c.done() {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow for a large value
		}
		n, err := c.nc.Read(buf[len(buf):cap(buf)])
		now := clk.now()
		buf = buf[:len(buf)+n]
		off := 0
		for {
			kind, m, perr := ParseReply(buf[off:])
			if perr != nil {
				c.fail(perr)
				return
			}
			if m == 0 {
				break
			}
			off += m
			var p pending
			select {
			case p = <-c.inflight:
			default:
				c.fail(fmt.Errorf("%v reply to no request", kind))
				return
			}
			if win.holds(p.sched) {
				c.stats.record(p, kind, now-p.sched)
			}
			c.received.Add(1)
			<-c.slots
		}
		buf = buf[:copy(buf, buf[off:])]
		if err != nil {
			if c.finished.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
				return // drained, or the drain timeout passed: unanswered requests are counted
			}
			if c.failure() == nil {
				c.fail(fmt.Errorf("read: %w", err))
			}
			return
		}
	}
}
