//go:build linux

package uring

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// counters are the ring's own loop counters (the shared ones are
// rawloop.Counters), written by their reactor and read by whoever runs
// `stats`.
type counters struct {
	enters      atomic.Uint64 // io_uring_enter calls of the loop
	sqes        atomic.Uint64
	cqes        atomic.Uint64
	maxBatch    atomic.Uint64 // most CQEs reaped at once
	emptyEnters atomic.Uint64 // enters after which there was no completion to reap
	waitNs      atomic.Uint64 // time spent in io_uring_enter, busy polling included
	recvArms    atomic.Uint64 // receives started
	enobufs     atomic.Uint64 // receives ended for want of a buffer
	shortSends  atomic.Uint64
	_           [64]byte // keep neighbouring reactors' counters off this cache line
}

func (c *counters) reset() {
	for _, v := range []*atomic.Uint64{&c.enters, &c.sqes, &c.cqes, &c.maxBatch, &c.emptyEnters, &c.waitNs,
		&c.recvArms, &c.enobufs, &c.shortSends} {
		v.Store(0)
	}
}

// ServerStats implements protocol.Server.
func (e *engine) ServerStats() protocol.ServerStats { return e.core.ServerStats() }

// ResetStats clears what `stats reset` clears in memcached.
func (e *engine) ResetStats() {
	e.core.ResetStats()
	for _, r := range e.reactors {
		r.stats.reset()
	}
}

// GroupStats writes `stats conns` and `stats reactors`.
func (e *engine) GroupStats(group string, add func(name, value string)) bool {
	switch group {
	case "conns":
		now := e.clock()
		var lines []reactor.ConnLine
		// One line per bound address, as memcached has one socket each;
		// reactor 0's descriptor names it.
		for i, b := range e.bound {
			if fd := e.reactors[0].listenerFD(i); fd >= 0 {
				lines = append(lines, reactor.ConnLine{FD: fd, Addr: b.label,
					State: reactor.StateListening, IdleSecs: now - e.started.Unix()})
			}
		}
		e.core.WriteConns(lines, e.cfg.MoreConns, now, add)
	case "reactors":
		for _, r := range e.reactors {
			r.reactorStats(add)
		}
	default:
		return false
	}
	return true
}

func (e *engine) clock() int64 { return time.Now().Unix() }

func (r *loop) listenerFD(group int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	// By index: the loop writes other fields (armed) without mu.
	for i := range r.listeners {
		if l := &r.listeners[i]; l.group == group {
			return l.fd
		}
	}
	return -1
}

// reactorStats writes r's `stats reactors` lines: the routing numbers the
// epoll engine has, the ring's loop counters, and the ring's settings as
// the kernel accepted them.
func (r *loop) reactorStats(add func(name, value string)) {
	p := r.Prefix()
	u := func(name string, v uint64) { add(p+name, strconv.FormatUint(v, 10)) }
	b := func(name string, v bool) {
		if v {
			u(name, 1)
		} else {
			u(name, 0)
		}
	}
	ec := &r.eng.cfg.Epoll
	r.WriteRouting(add, p)
	u("enters", r.stats.enters.Load())
	u("sqes", r.stats.sqes.Load())
	u("cqes", r.stats.cqes.Load())
	u("max_batch", r.stats.maxBatch.Load())
	u("empty_enters", r.stats.emptyEnters.Load())
	u("wait_us", r.stats.waitNs.Load()/1000)
	u("recv_arms", r.stats.recvArms.Load())
	u("recv_enobufs", r.stats.enobufs.Load())
	u("short_sends", r.stats.shortSends.Load())
	u("sq_entries", uint64(r.ring.sqEntries))
	u("cq_entries", uint64(r.ring.cqEntries))
	add(p+"setup_flags", setupFlagNames(r.ring.flags))
	b("registered_ring", r.registeredRing.Load())
	add(p+"buf_ring", strconv.Itoa(int(r.bufs.entries))+"x"+strconv.Itoa(r.bufs.size))
	u("busy_poll_usecs", uint64(r.napi.busyPollUsecs))
	b("prefer_busy_poll", r.napi.prefer)
	add(p+"napi_tracking", r.napi.trackingName())
	reactor.WritePollLines(add, p, ec, r.NAPIID.Load())
}
