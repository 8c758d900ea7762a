//go:build linux

package reactor

import (
	"strconv"
	"sync/atomic"

	"github.com/gocached/gocached/internal/protocol"
	"golang.org/x/sys/unix"
)

// reactorCounters are written by their reactor and read by whichever
// goroutine runs `stats`; atomics keep that exchange race-free without locks.
type reactorCounters struct {
	conns        atomic.Int64
	accepted     atomic.Uint64
	handoffIn    atomic.Uint64
	handoffOut   atomic.Uint64
	epollWaits   atomic.Uint64
	events       atomic.Uint64
	maxBatch     atomic.Uint64
	bytesRead    atomic.Uint64
	bytesWritten atomic.Uint64
	yields       atomic.Uint64
	_            [64]byte // keep neighbouring reactors' counters off this cache line
}

func (c *reactorCounters) reset() {
	for _, v := range []*atomic.Uint64{&c.accepted, &c.handoffIn, &c.handoffOut, &c.epollWaits,
		&c.events, &c.maxBatch, &c.bytesRead, &c.bytesWritten, &c.yields} {
		v.Store(0)
	}
}

// ServerStats implements protocol.Server with memcached's accounting: listening
// sockets count in total_connections and connection_structures, not in
// curr_connections.
func (e *epollEngine) ServerStats() protocol.ServerStats {
	listeners := uint64(0)
	for _, r := range e.reactors {
		listeners += uint64(len(r.listeners))
	}
	s := protocol.ServerStats{
		CurrConnections:     uint64(max(e.curConns.Load(), 0)),
		TotalConnections:    e.totalConns.Load() + listeners,
		RejectedConnections: e.rejected.Load(),
		ConnStructures:      uint64(max(e.peakConns.Load(), 0)) + listeners,
		ListenDisabledNum:   e.listenDisabled.Load(),
		AcceptingConns:      !e.quitting.Load(),
		Threads:             uint64(len(e.reactors)),
	}
	for _, r := range e.reactors {
		s.BytesRead += r.stats.bytesRead.Load()
		s.BytesWritten += r.stats.bytesWritten.Load()
		s.ConnYields += r.stats.yields.Load()
	}
	return s
}

// ResetStats clears what `stats reset` clears in memcached.
func (e *epollEngine) ResetStats() {
	e.totalConns.Store(0)
	e.rejected.Store(0)
	e.listenDisabled.Store(0)
	for _, r := range e.reactors {
		r.stats.reset()
	}
}

// GroupStats writes `stats conns` and `stats reactors`.
func (e *epollEngine) GroupStats(group string, add func(name, value string)) bool {
	switch group {
	case "conns":
		for _, r := range e.reactors {
			r.connStats(add)
		}
	case "reactors":
		for _, r := range e.reactors {
			r.reactorStats(add)
		}
	default:
		return false
	}
	return true
}

// connStats writes memcached's `stats conns` lines for r's sockets. It holds
// r.mu, under which r never closes a descriptor, so every fd read here is
// still the connection it names.
func (r *reactor) connStats(add func(name, value string)) {
	now := r.eng.clock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, fd := range r.listeners {
		if fd < 0 {
			continue
		}
		p := strconv.Itoa(fd) + ":"
		add(p+"addr", r.listenAddrs[i])
		add(p+"state", "conn_listening")
		add(p+"secs_since_last_cmd", "0")
	}
	for _, c := range r.conns {
		if c == nil {
			continue
		}
		p := strconv.Itoa(c.fd) + ":"
		peer := "tcp:unknown"
		if sa, err := unix.Getpeername(c.fd); err == nil {
			a := sockaddrTCP(sa)
			peer = "tcp:" + a.String()
		}
		add(p+"addr", peer)
		if c.listener < len(r.listenAddrs) {
			add(p+"listen_addr", r.listenAddrs[c.listener])
		}
		add(p+"state", "conn_parse_cmd")
		add(p+"secs_since_last_cmd", strconv.FormatInt(max(now-c.lastCmd.Load(), 0), 10))
	}
}

// misrouted counts r's connections whose SO_INCOMING_NAPI_ID now differs
// from r's NAPI ID, under r.mu for the same reason as connStats.
func (r *reactor) misrouted() int {
	id := r.napiID.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.conns {
		if c != nil && incomingNAPIID(c.fd) != id {
			n++
		}
	}
	return n
}

func (r *reactor) reactorStats(add func(name, value string)) {
	p := "reactor:" + strconv.Itoa(r.id) + ":"
	u := func(name string, v uint64) { add(p+name, strconv.FormatUint(v, 10)) }
	u("napi_id", uint64(r.napiID.Load()))
	add(p+"cpu", strconv.Itoa(r.cpu))
	u("conns", uint64(max(r.stats.conns.Load(), 0)))
	u("accepted", r.stats.accepted.Load())
	u("handoff_in", r.stats.handoffIn.Load())
	u("handoff_out", r.stats.handoffOut.Load())
	u("misrouted", uint64(r.misrouted()))
	u("epoll_waits", r.stats.epollWaits.Load())
	u("events", r.stats.events.Load())
	u("max_batch", r.stats.maxBatch.Load())
	u("busy_poll_usecs", uint64(r.params.BusyPollUsecs))
	u("busy_poll_budget", uint64(r.params.BusyPollBudget))
	prefer := uint64(0)
	if r.params.PreferBusyPoll {
		prefer = 1
	}
	u("prefer_busy_poll", prefer)
	u("max_events", uint64(r.eng.cfg.MaxEvents))
	mode := r.eng.cfg.PollMode
	if mode == "" {
		mode = "none" // gocached leaves the kernel's NAPI knobs alone
	}
	add(p+"poll_mode", mode)
	// The knobs are read back from the kernel now. A reactor that has not
	// learned its NAPI yet, or whose NAPI cannot be read, has no such lines.
	if read := r.eng.cfg.NAPIKnobs; read != nil {
		if id := r.napiID.Load(); id != 0 {
			if deferIRQs, gro, suspend, err := read(id); err == nil {
				u("defer_hard_irqs", uint64(deferIRQs))
				u("gro_flush_timeout", gro)
				u("irq_suspend_timeout", suspend)
			}
		}
	}
}
