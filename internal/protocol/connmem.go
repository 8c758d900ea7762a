package protocol

import (
	"sync"
	"sync/atomic"
)

// Connection memory, accounted as memcached (1.6.7 on) accounts it: every
// worker thread takes the 16 KiB blocks its connections need from one pool,
// a read buffer for each connection holding input it has not parsed yet,
// and bundles of response objects for replies stacked but not yet sent,
// one object per command and one per key of a multiget. The bundles are
// the worker's, shared by its connections, and once it has one it keeps
// one (memcached's open bundle). -o
// read_buf_mem_limit caps each worker's pool at its share of the limit
// (the limit over -t, at least one block). Then:
//   - a connection that needs a read buffer and finds none is closed
//     without a reply (read_buf_oom);
//   - a command that finds no response object closes its connection
//     without sending the replies stacked since the last flush;
//   - a multiget that finds none for its next key drops what it had
//     gathered and answers "SERVER_ERROR out of memory writing get
//     response" (both count response_obj_oom).
//
// Replies are flushed, and their objects given back, where memcached
// writes before reading on: after a retrieval's END, at mn, after a
// storage command whose data came in a later read, and when a Process call
// ends (a batch of -R commands, or the input), unless a multiget or a
// value going out in pieces is still being answered, or a command waits
// for its data block: those keep their objects. So pipelined meta
// commands stack, gets do not. The engines keep their own
// buffers (reactor.LoopPools); the accounting is in memcached's units so
// that a limit tuned for memcached holds the same commands back here, and
// it bounds what one worker's clients can make it hold at once. Without a
// limit nothing is accounted (a few atomics per request, some 20% of a
// pipelined get's protocol time) and the stats stay 0.

const (
	// memBlock is memcached's READ_BUFFER_SIZE: one read buffer, or one
	// bundle of response objects.
	memBlock = 16 << 10
	// respPerBlock is how many response objects a bundle holds in memcached
	// 1.6.18 on 64-bit Linux (measured: with one block free, a get of 13
	// keys is answered and one of 14 runs out).
	respPerBlock = 13
)

// memShare is one worker's pool. Its counters are atomic because stats and,
// on the portable engine, several connections' goroutines read or change
// them at once.
type memShare struct {
	inUse   atomic.Int64 // blocks held: read buffers and response bundles
	high    atomic.Int64 // most blocks held at once: memcached's caches keep freed blocks for reuse
	bundles atomic.Int64 // response bundles held
	objs    atomic.Int64 // response objects in use
	readOOM atomic.Uint64
	respOOM atomic.Uint64
	// objsBase and bundlesBase are objs and bundles at the last `stats
	// reset`, which memcached zeroes with its other thread counters while
	// objects are in use, so that those read as 0 (or less) after it.
	objsBase, bundlesBase atomic.Int64
	_                     [64]byte // one worker's counters off the next one's cache line
}

// take reserves n blocks unless that would pass limit.
func (m *memShare) take(n, limit int64) bool {
	for {
		cur := m.inUse.Load()
		if cur+n > limit {
			return false
		}
		if m.inUse.CompareAndSwap(cur, cur+n) {
			m.raiseHigh(cur + n)
			return true
		}
	}
}

// raiseHigh records that n blocks are held.
func (m *memShare) raiseHigh(n int64) {
	for h := m.high.Load(); n > h && !m.high.CompareAndSwap(h, n); h = m.high.Load() {
	}
}

// connMemory is the server's pools, one per worker (Settings.Threads).
type connMemory struct {
	once   sync.Once
	limit  int64 // blocks per worker; 0: unlimited
	shares []memShare
	next   atomic.Uint32 // deals workers to Sessions no engine placed
}

func (c *connMemory) setup(set *Settings) {
	c.once.Do(func() {
		n := 1
		if set != nil && set.Threads > 0 {
			n = set.Threads
		}
		c.shares = make([]memShare, n)
		if limit := set.tuning().ReadBufMemLimit; limit > 0 {
			// memcached: a share under one block still gets one.
			c.limit = max(1, int64(limit)/int64(n)/memBlock)
		}
	})
}

// memStats are the totals `stats` reports.
type memStats struct {
	respOOM, respObjs, respBytes           uint64
	readBufs, readBytes, readFree, readOOM uint64
}

func (c *connMemory) stats(set *Settings) memStats {
	c.setup(set)
	var t memStats
	for i := range c.shares {
		m := &c.shares[i]
		high, inUse := m.high.Load(), m.inUse.Load()
		t.respOOM += m.respOOM.Load()
		t.respObjs += uint64(max(0, m.objs.Load()-m.objsBase.Load()))
		t.respBytes += uint64(max(0, m.bundles.Load()-m.bundlesBase.Load())) * memBlock
		t.readBufs += uint64(high)
		t.readFree += uint64(max(0, high-inUse)) * memBlock
		t.readOOM += m.readOOM.Load()
	}
	t.readBytes = t.readBufs * memBlock
	return t
}

// reset is `stats reset`: memcached zeroes the out-of-memory counts and
// the response object counts, not the read buffer ones.
func (c *connMemory) reset(set *Settings) {
	c.setup(set)
	for i := range c.shares {
		m := &c.shares[i]
		m.readOOM.Store(0)
		m.respOOM.Store(0)
		m.objsBase.Store(m.objs.Load())
		m.bundlesBase.Store(m.bundles.Load())
	}
}

// connMem is a Session's accounting state.
type connMem struct {
	share   *memShare // the worker's pool once bound, with a limit set
	worker  int       // the engine's worker for the connection (SetWorker)
	placed  bool      // worker was set by the engine
	readBuf bool      // holds a read buffer
	objs    int       // response objects since the last flush (in its worker's bundles)
	keyPaid bool      // the current command's object covers its first key
	// carried: a command still waiting for its data block kept its object
	// from the last call, and the next command charged (the same one,
	// parsed again) takes it over.
	carried bool
	// waiting: this call ends with a charged command still waiting for
	// its data block; resumed: the command charged last took over a
	// carried object, so its data came in a later read, which memcached
	// reads on directly (conn_nread) and flushes after.
	waiting, resumed bool
	cut              bool // no object was left for an error reply: close
	// off: no limit is set, so nothing is accounted (share stays nil),
	// which keeps the per-request atomics off the default path. Neither
	// off nor share set: not bound to a pool yet.
	off bool
}

// SetWorker tells the Session which of the engine's workers (event loops)
// serves its connection, whose share of -o read_buf_mem_limit it draws
// on. Without it a Session is dealt a worker round-robin, as memcached
// deals connections to its threads.
func (s *Session) SetWorker(id int) {
	s.mem.worker, s.mem.placed, s.mem.off, s.mem.share = id, true, false, nil
}

// memCounted binds the Session to its worker's pool on first use and
// reports whether a limit makes it account its memory.
func (s *Session) memCounted() bool {
	if s.mem.share == nil && !s.mem.off {
		s.bindMem()
	}
	return s.mem.share != nil
}

func (s *Session) bindMem() {
	c := &s.env.mem
	c.setup(s.env.Settings)
	s.mem.off = c.limit == 0
	if !s.mem.off {
		w := s.mem.worker
		if !s.mem.placed {
			w = int(c.next.Add(1) - 1)
		}
		s.mem.share = &c.shares[uint(w)%uint(len(c.shares))]
	}
}

// takeReadBuf is the read buffer a connection with input needs; false
// means none is left and the connection must close.
func (s *Session) takeReadBuf() bool {
	// memcached's UDP reads need none.
	return s.mem.off || s.mem.readBuf || s.conn.datagramID != 0 || s.takeReadBufCounted()
}

func (s *Session) takeReadBufCounted() bool {
	if !s.memCounted() {
		return true
	}
	m := s.mem.share
	if !m.take(1, s.env.mem.limit) {
		m.readOOM.Add(1)
		return false
	}
	s.mem.readBuf = true
	return true
}

// releaseReadBuf gives the read buffer back: the connection's input is
// all parsed, or it is gone.
func (m *connMem) releaseReadBuf() {
	if m.readBuf {
		m.share.inUse.Add(-1)
		m.readBuf = false
	}
}

// chargeReply takes one response object, and a bundle when the last one
// is full; false (counted in response_obj_oom) when none is left.
func (s *Session) chargeReply() bool {
	return s.mem.off || s.chargeCounted()
}

func (s *Session) chargeCounted() bool {
	if !s.memCounted() {
		return true
	}
	m := s.mem.share
	for {
		o, b := m.objs.Load(), m.bundles.Load()
		if o < b*respPerBlock {
			if m.objs.CompareAndSwap(o, o+1) {
				s.mem.objs++
				return true
			}
			continue
		}
		if !m.take(1, s.env.mem.limit) {
			m.respOOM.Add(1)
			return false
		}
		m.bundles.Add(1)
	}
}

// chargeCommand is chargeReply for a command; its object also covers the
// first key of a multiget.
func (s *Session) chargeCommand() bool {
	if s.mem.off {
		s.mem.keyPaid = true
		return true
	}
	return s.chargeCommandCounted()
}

func (s *Session) chargeCommandCounted() bool {
	s.mem.resumed = false
	if s.mem.carried {
		s.mem.carried = false
		s.mem.keyPaid = true
		s.mem.resumed = true
		return true
	}
	s.mem.keyPaid = s.chargeReply()
	return s.mem.keyPaid
}

// endResumed is the end of a command whose data block came in a later
// read than its line: memcached, having read the rest of the block
// straight into the item, finds its read buffer empty and flushes.
func (s *Session) endResumed() {
	if s.mem.resumed {
		s.mem.resumed = false
		s.markFlushed()
	}
}

// endCall gives back, as a Process call ends, the objects of the replies
// the engine is about to send, except the one of a command whose data
// block is still to come and those of a reply still being made (a
// multiget paused between keys, a value going out in pieces): memcached
// holds a command's objects until its reply is written.
func (s *Session) endCall(waiting bool) {
	if s.mem.objs > 0 && (s.send.active || s.get.multiget.active && !s.get.multiget.skip) {
		return
	}
	if !waiting || s.mem.objs == 0 {
		s.mem.releaseReplies()
		return
	}
	s.mem.carryOne()
}

// carryOne gives back all the objects but the waiting command's.
func (m *connMem) carryOne() {
	m.trimReplies(1)
	m.carried = true
}

// releaseReplies gives back the objects of the replies stacked so far:
// they are flushed.
func (m *connMem) releaseReplies() {
	m.carried = false
	if m.objs > 0 {
		m.trimReplies(0)
	}
}

// markFlushed records that memcached would have written the replies so far
// before reading on: hasPendingReplies starts over and their objects are
// free again.
func (s *Session) markFlushed() {
	s.flushMark = len(s.out)
	s.mem.releaseReplies()
	s.held.release()
}

// dropUnflushed culls the replies stacked since the last flush, as
// memcached's conn_release_items does before an out-of-memory error or a
// close.
func (s *Session) dropUnflushed() {
	if len(s.out) > s.flushMark {
		s.culls++
	}
	s.out = s.out[:s.flushMark]
	s.refs.dropFrom(s.env.Store, s.flushMark) // values in the replies dropped
	s.mem.releaseReplies()
	s.held.release()
}

// getOOM ends a multiget whose next key found no response object as
// memcached's process_get_command does: every reply stacked since the last
// flush goes (conn_release_items), and the error takes one fresh object,
// or closes the connection when even that is missing. It is not flushed:
// later commands stack on it.
func (s *Session) getOOM() {
	s.dropUnflushed()
	if !s.chargeReply() {
		s.mem.cut = true
		return
	}
	s.out = append(s.out, rGetOOM...)
	if s.log.verbose {
		s.vlogLine('>', []byte(rGetOOM[:len(rGetOOM)-2]))
	}
}

// trimReplies gives back the objects taken past the first n: replies
// that were dropped.
func (c *connMem) trimReplies(n int) {
	if n >= c.objs {
		return
	}
	m := c.share
	m.objs.Add(int64(n - c.objs))
	c.objs = n
	m.shrink()
}

// shrink frees the bundles the worker's objects no longer need, but one:
// memcached keeps a thread's open bundle once it has one.
func (m *memShare) shrink() {
	for {
		b, o := m.bundles.Load(), m.objs.Load()
		if b <= max(1, (o+respPerBlock-1)/respPerBlock) {
			return
		}
		if m.bundles.CompareAndSwap(b, b-1) {
			m.inUse.Add(-1)
		}
	}
}

// startCall forgets the last call's charges: a new Process call starts.
func (m *connMem) startCall() { m.keyPaid, m.waiting, m.resumed = false, false, false }

// endMem gives back everything the connection holds: it is closed.
func (s *Session) endMem() {
	if s.mem.share != nil {
		s.mem.releaseReplies()
		s.mem.releaseReadBuf()
	}
	s.mem = connMem{}
}
