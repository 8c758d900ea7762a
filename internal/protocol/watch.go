package protocol

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/store"
)

// memcached's `watch` log streaming. A watching connection answers OK, then
// receives one line per logged event of the kinds it asked for, in
// memcached's format ("ts=... gid=... type=item_get key=... status=...").
// Each watcher has a bounded buffer (memcached's watcher_logbuf_size):
// when its client reads too slowly, lines are dropped, never queued without
// bound, and "skipped=N" reports them where the gap is, as in memcached.
// Logging costs one atomic load per command while nobody watches.
//
// Kinds: fetchers (item_get for every lookup a command makes, a storage
// command's included), mutations (item_store for every store), evictions
// (eviction, from the store's hook), connevents and deletions (deleted, for
// delete and md: watch_deletions.go) are produced; sysevents, rawcmds and
// memcached's proxy kinds are accepted and log nothing yet.

const (
	logFetchers   = 1 << iota // LOG_FETCHERS
	logMutations              // LOG_MUTATIONS
	logEvictions              // LOG_EVICTIONS
	logConnEvents             // LOG_CONNEVENTS: conn_new, conn_close
	logDeletions              // LOG_DELETIONS: deleted (memcached 1.6.20 on)
	logOther                  // rawcmds, proxy*: nothing to log
	logSysEvents              // LOG_SYSEVENTS: the flash compactor's lines
)

// watcherBufSize is memcached's default watcher_logbuf_size
// (Settings.WatcherLogbufSize overrides it).
const watcherBufSize = 256 << 10

// watcherLogbufSize is the byte limit of each watcher's buffer: -o
// watcher_logbuf_size (given in KB, as memcached) or the default.
func (e *Env) watcherLogbufSize() int {
	if st := e.Settings; st != nil && st.WatcherLogbufSize > 0 {
		return st.WatcherLogbufSize
	}
	return watcherBufSize
}

// maxWatchers is memcached's limit on log watchers.
const maxWatchers = 20

type watcher struct {
	flags uint32
	mu    sync.Mutex
	buf   []byte // pending lines, at most limit bytes
	limit int    // watcher_logbuf_size in bytes
	// skipped counts lines dropped since the last one that fitted.
	skipped uint64
	wake    func()
	woken   bool // wake was called and the Session has not drained since
}

type watchHub struct {
	mu       sync.Mutex
	watchers []*watcher
	mask     atomic.Uint32 // union of the watchers' flags
	gid      atomic.Uint64
	written  atomic.Uint64 // log_worker_written: events logged, whoever took them
	skipped  atomic.Uint64 // log_watcher_skipped
	sent     atomic.Uint64 // log_watcher_sent
	hookOnce sync.Once     // the store's eviction hook is installed
}

func (h *watchHub) add(w *watcher) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.watchers) >= maxWatchers {
		return false
	}
	h.watchers = append(h.watchers, w)
	h.mask.Store(h.mask.Load() | w.flags)
	return true
}

func (h *watchHub) remove(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var mask uint32
	kept := h.watchers[:0]
	for _, o := range h.watchers {
		if o != w {
			kept = append(kept, o)
			mask |= o.flags
		}
	}
	clear(h.watchers[len(kept):])
	h.watchers = kept
	h.mask.Store(mask)
}

// count is log_watchers.
func (h *watchHub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watchers)
}

// publish offers one line (ending in '\n') to every watcher of kind.
func (h *watchHub) publish(kind uint32, line []byte) {
	var wakes [maxWatchers]func()
	nw := 0
	h.written.Add(1)
	h.mu.Lock()
	for _, w := range h.watchers {
		if w.flags&kind == 0 {
			continue
		}
		w.mu.Lock()
		var skip []byte
		if w.skipped > 0 {
			skip = strconv.AppendUint([]byte("skipped="), w.skipped, 10)
			skip = append(skip, '\n')
		}
		if len(w.buf)+len(skip)+len(line) > w.limit {
			w.skipped++
			h.skipped.Add(1)
			w.mu.Unlock()
			continue
		}
		w.buf = append(w.buf, skip...)
		w.buf = append(w.buf, line...)
		w.skipped = 0
		h.sent.Add(1)
		wake := w.wake
		if w.woken {
			wake = nil
		}
		w.woken = true
		w.mu.Unlock()
		if wake != nil {
			wakes[nw] = wake
			nw++
		}
	}
	h.mu.Unlock()
	// Outside the hub's lock: a wakeup may close its watcher.
	for _, wake := range wakes[:nw] {
		wake()
	}
}

// logHeader starts a log line: "ts=<sec>.<usec> gid=<n> ".
func (h *watchHub) logHeader(b []byte) []byte {
	now := time.Now()
	b = append(b, "ts="...)
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(now.Nanosecond()/1000), 10) // memcached's "%d": not padded
	b = append(b, " gid="...)
	b = strconv.AppendUint(b, h.gid.Add(1), 10)
	return append(b, ' ')
}

// watching reports which log kinds someone watches (0 nearly always).
func (e *Env) watching() uint32 { return e.logs.mask.Load() }

// logGet publishes an item_get line (memcached's LOGGER_ITEM_GET): what
// the lookup found, and for a live item its class and value length.
func (s *Session) logGet(key []byte, p store.Presence, class, size int) {
	h := &s.env.logs
	b := h.logHeader(s.log.line[:0])
	b = append(b, "type=item_get key="...)
	b = appendURIEncoded(b, key)
	b = append(b, " status="...)
	b = append(b, p.String()...)
	if p != store.Present {
		class, size = 0, 0
	}
	b = append(b, " clsid="...)
	b = strconv.AppendInt(b, int64(class), 10)
	b = append(b, " cfd="...)
	b = strconv.AppendInt(b, int64(s.conn.id), 10)
	b = append(b, " size="...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, '\n')
	s.log.line = b
	h.publish(logFetchers, b)
}

// logConn publishes memcached's conn_new or conn_close line (reason is
// conn_close's): "type=conn_new rip=127.0.0.1 rport=55814 transport=tcp
// cfd=25"; "rip=unix rport=0 transport=local" on a unix socket. rip and
// rport are left out when the engine did not give the address (Opened
// rather than OpenedFrom).
func (s *Session) logConn(typ, reason string) {
	h := &s.env.logs
	var scratch [256]byte
	b := h.logHeader(scratch[:0])
	b = append(b, "type="...)
	b = append(b, typ...)
	if s.conn.transport == "local" {
		b = append(b, " rip=unix rport=0"...) // memcached's for a unix socket
	} else if s.conn.peer.IsValid() {
		b = append(b, " rip="...)
		b = s.conn.peer.Addr().Unmap().AppendTo(b)
		b = append(b, " rport="...)
		b = strconv.AppendUint(b, uint64(s.conn.peer.Port()), 10)
	}
	transport := s.conn.transport
	if transport == "" {
		transport = "tcp"
	}
	b = append(b, " transport="...)
	b = append(b, transport...)
	if reason != "" {
		b = append(b, " reason="...)
		b = append(b, reason...)
	}
	b = append(b, " cfd="...)
	b = strconv.AppendInt(b, int64(s.conn.id), 10)
	b = append(b, '\n')
	h.publish(logConnEvents, b)
}

// logStore publishes an item_store line (memcached's LOGGER_ITEM_STORE).
func (s *Session) logStore(key []byte, status, cmd string, ttl uint32, class, size int) {
	h := &s.env.logs
	b := h.logHeader(s.log.line[:0])
	b = append(b, "type=item_store key="...)
	b = appendURIEncoded(b, key)
	b = append(b, " status="...)
	b = append(b, status...)
	b = append(b, " cmd="...)
	b = append(b, cmd...)
	b = append(b, " ttl="...)
	b = strconv.AppendUint(b, uint64(ttl), 10)
	b = append(b, " clsid="...)
	b = strconv.AppendInt(b, int64(class), 10)
	b = append(b, " cfd="...)
	b = strconv.AppendInt(b, int64(s.conn.id), 10)
	b = append(b, " size="...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, '\n')
	s.log.line = b
	h.publish(logMutations, b)
}

// watch runs `watch [kinds...]`: the connection becomes a log stream.
func (s *Session) watchCommand(line []byte, n int) {
	if st := s.env.Settings; st != nil && st.WatchDisabled {
		s.reply("CLIENT_ERROR watch commands not allowed\r\n")
		return
	}
	if s.hasPendingReplies() {
		s.reply("ERROR cannot pipeline other commands before watch\r\n")
		return
	}
	var flags uint32
	if n == 1 {
		flags = logFetchers
	}
	// Every token after the command names a kind, noreply included (it
	// makes the line an ERROR, silenced). On a line of more tokens than
	// memcached splits, what follows the last one split is not looked at.
	for i := 1; i < min(n, maxTokens-1); i++ {
		switch string(s.text.token(line, i)) {
		case "fetchers":
			flags |= logFetchers
		case "mutations":
			flags |= logMutations
		case "evictions":
			flags |= logEvictions
		case "connevents":
			flags |= logConnEvents
		case "deletions":
			flags |= logDeletions
		case "sysevents":
			flags |= logSysEvents
		case "rawcmds", "proxyreqs", "proxyevents", "proxyuser":
			flags |= logOther
		default:
			s.reply(rError)
			return
		}
	}
	if !s.env.ResumesPending {
		s.reply("WATCHER_FAILED failed to add log watcher\r\n")
		return
	}
	if s.conn.datagramID != 0 {
		// memcached's logger writes "OK" and the stream straight to the
		// socket, which for UDP has no peer: nothing is sent, and the
		// connection, handed to the logger, drops the rest of the
		// datagram.
		s.conn.dropDatagram = true
		return
	}
	if flags&logEvictions != 0 {
		s.env.installEvictionHook()
	}
	if flags&logSysEvents != 0 {
		defer s.env.installSysEventHook() // once the watcher is counted
	}
	w := &watcher{flags: flags, wake: s.conn.wakeup, limit: s.env.watcherLogbufSize()}
	if !s.env.logs.add(w) {
		s.reply("WATCHER_TOO_MANY log watcher limit reached\r\n")
		return
	}
	s.stream.watch = w
	s.out = append(s.out, rOK...)
}

// drainWatch moves the watcher's pending lines to the output, up to the
// output budget. Once the buffer is empty, a count of lines dropped while
// it was full follows at once rather than waiting for the next line to
// carry it: memcached drops only when the client's socket is full (its
// logger flushes before giving up), so its stream shows the gap as soon as
// the client catches up; here the buffer drains on the connection's own
// turn, and a client that reads the stream dry before causing another line
// (memcached's watcher.t) would otherwise wait for the notice forever.
func (s *Session) drainWatch() {
	w := s.stream.watch
	w.mu.Lock()
	n := min(len(w.buf), max(0, OutputBudget-(len(s.out)-s.outStart)))
	s.out = append(s.out, w.buf[:n]...)
	rest := copy(w.buf, w.buf[n:])
	w.buf = w.buf[:rest]
	if rest == 0 {
		if w.skipped > 0 {
			s.out = append(s.out, "skipped="...)
			s.out = strconv.AppendUint(s.out, w.skipped, 10)
			s.out = append(s.out, '\n')
			w.skipped = 0
		}
		w.woken = false
		if cap(w.buf) > 64<<10 {
			w.buf = nil
		}
	}
	w.mu.Unlock()
}

// stopWatch unregisters the Session's watcher (its connection is gone).
func (s *Session) stopWatch() {
	if s.stream.watch != nil {
		s.env.logs.remove(s.stream.watch)
		s.stream.watch = nil
	}
}

// logLookup publishes the item_get line of a lookup a command is about to
// make (memcached logs every item lookup, a storage command's included),
// from a peek at the store; only called while someone watches fetchers.
func (s *Session) logLookup(key []byte) {
	l := s.env.Store.Peek(key)
	s.logGet(key, l.Presence, l.Class, l.ValueLen)
}

// logVivified publishes what memcached logs when an incr/decr creates its
// missing item (binary INCR/DECR with an initial value, ma with N): the
// add's own lookup and its store, of the initial value's digits.
func (s *Session) logVivified(key []byte, initial uint64, ttl uint32) {
	var digits [20]byte
	vlen := len(strconv.AppendUint(digits[:0], initial, 10))
	if s.env.watching()&logFetchers != 0 {
		s.logGet(key, store.Absent, 0, 0)
	}
	if s.env.watching()&logMutations != 0 {
		s.logStore(key, "stored", "add", ttl, s.env.Store.ItemClass(len(key), vlen, 0), vlen)
	}
}

// logRefused publishes what memcached logs for a store it refuses before
// making the item (a value over the item size limit): a store line with no
// item behind it, its ttl, class and size 0 (memcached's own line carries
// junk in clsid and cfd there, from a slip in its arguments), then, when
// the refusal also drops the key's old value, that drop's lookup.
func (s *Session) logRefused(key []byte, mode store.Mode, drops bool) {
	if s.env.watching()&logMutations != 0 {
		s.logStore(key, storeStatus(store.TooLarge), storeCmdName(mode), 0, 0, 0)
	}
	if drops && s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
}

// logStoreResult publishes the item_store line of a finished store as
// memcached logs it: an item stored as the cache now holds it (an append's
// whole value and class, the TTL a stale CAS kept), a refused one as the
// request would have made it (its value, class and exptime).
func (s *Session) logStoreResult(key []byte, res store.Result, mode store.Mode, exptime int64, flags uint32, vlen int) {
	st := s.env.Store
	if res == store.Stored {
		if l := st.Peek(key); l.Presence == store.Present {
			s.logStore(key, storeStatus(res), storeCmdName(mode), l.TTL, l.Class, l.ValueLen)
			return
		}
	}
	s.logStore(key, storeStatus(res), storeCmdName(mode), st.LogTTL(exptime), st.ItemClass(len(key), vlen, flags), vlen)
}

// installEvictionHook makes the store report evictions to the watchers;
// while nobody watches them the hook costs one atomic load per eviction.
func (e *Env) installEvictionHook() {
	e.logs.hookOnce.Do(func() {
		e.Store.SetEvictionHook(e.logEviction)
	})
}

// logEviction publishes memcached's eviction line. It runs under the
// evicted item's shard lock, on whatever goroutine stored.
func (e *Env) logEviction(it store.EvictedItem) {
	h := &e.logs
	if h.mask.Load()&logEvictions == 0 {
		return
	}
	var scratch [512]byte
	now := e.Store.Now()
	b := h.logHeader(scratch[:0])
	b = append(b, "type=eviction key="...)
	b = appendURIEncoded(b, it.Key)
	if it.Fetched {
		b = append(b, " fetch=yes ttl="...)
	} else {
		b = append(b, " fetch=no ttl="...)
	}
	ttl := int64(-1)
	if it.Exptime > 0 {
		ttl = it.Exptime - now
	}
	b = strconv.AppendInt(b, ttl, 10)
	b = append(b, " la="...)
	b = strconv.AppendInt(b, now-it.LastAccess, 10)
	b = append(b, " clsid="...)
	b = strconv.AppendInt(b, int64(e.Store.ItemClass(len(it.Key), it.ValueLen, it.Flags)), 10)
	b = append(b, " size="...)
	b = strconv.AppendInt(b, int64(it.ValueLen), 10)
	b = append(b, '\n')
	h.publish(logEvictions, b)
}

// installSysEventHook makes the store's flash compactor report to the
// sysevents watchers.
func (e *Env) installSysEventHook() {
	// Each new watcher installs it again: that restarts the compactor's
	// watched cadence, which stops while nobody watches.
	e.Store.SetFlashEventHook(e.logSysEvent)
}

// logSysEvent publishes one sysevents line; a nil line only asks whether
// anyone watches.
func (e *Env) logSysEvent(line []byte) bool {
	h := &e.logs
	if h.mask.Load()&logSysEvents == 0 {
		return false
	}
	if line == nil {
		return true
	}
	var scratch [256]byte
	b := h.logHeader(scratch[:0])
	b = append(b, line...)
	h.publish(logSysEvents, append(b, '\n'))
	return true
}
