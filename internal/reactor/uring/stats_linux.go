//go:build linux

package uring

import (
	"strconv"
	"sync/atomic"

	"github.com/gocached/gocached/internal/reactor"
)

// ringCounters are the ring's own loop counters (the shared ones are
// rawloop.Counters), written by their reactor and read by whoever runs
// `stats`.
type ringCounters struct {
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

func (c *ringCounters) reset() {
	for _, v := range []*atomic.Uint64{&c.enters, &c.sqes, &c.cqes, &c.maxBatch, &c.emptyEnters, &c.waitNs,
		&c.recvArms, &c.enobufs, &c.shortSends} {
		v.Store(0)
	}
}

// ResetStats clears the ring's counters (`stats reset`).
func (r *loop) ResetStats() { r.stats.reset() }

// ReactorStats adds r's own `stats reactors` lines after the routing lines
// every engine has: the ring's loop counters, and the ring's settings as
// the kernel accepted them.
func (r *loop) ReactorStats(add func(name, value string), p string) {
	u := func(name string, v uint64) { add(p+name, strconv.FormatUint(v, 10)) }
	b := func(name string, v bool) {
		if v {
			u(name, 1)
		} else {
			u(name, 0)
		}
	}
	ec := &r.eng.cfg.Epoll
	u("enters", r.stats.enters.Load())
	u("sqes", r.stats.sqes.Load())
	u("cqes", r.stats.cqes.Load())
	u("max_batch", r.stats.maxBatch.Load())
	u("empty_enters", r.stats.emptyEnters.Load())
	u("wait_us", r.stats.waitNs.Load()/1000)
	u("recv_arms", r.stats.recvArms.Load())
	u("recv_enobufs", r.stats.enobufs.Load())
	u("short_sends", r.stats.shortSends.Load())
	u("sq_entries", uint64(r.ring.SQEntries()))
	u("cq_entries", uint64(r.ring.CQEntries()))
	add(p+"setup_flags", setupFlagNames(r.ring.Flags()))
	b("registered_ring", r.registeredRing.Load())
	add(p+"buf_ring", strconv.Itoa(r.bufs.Entries())+"x"+strconv.Itoa(r.bufs.Size()))
	u("busy_poll_usecs", uint64(r.napi.busyPollUsecs))
	b("prefer_busy_poll", r.napi.prefer)
	add(p+"napi_tracking", r.napi.trackingName())
	reactor.WritePollLines(add, p, ec, r.NAPIID.Load())
}
