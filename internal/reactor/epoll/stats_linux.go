//go:build linux

package epoll

import (
	"math/bits"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// epollCounters are epoll's own loop counters (the shared ones are
// rawloop.Counters), written by their reactor and read by whichever
// goroutine runs `stats`; atomics keep that exchange race-free without locks.
type epollCounters struct {
	epollWaits  atomic.Uint64
	events      atomic.Uint64
	maxBatch    atomic.Uint64
	emptyWaits  atomic.Uint64    // epoll_wait returned no event (a timeout, or a busy poll that found nothing)
	fullBatches atomic.Uint64    // epoll_wait returned max_events: more may have been ready
	waitNs      atomic.Uint64    // time spent in epoll_wait, busy polling included
	busyNs      atomic.Uint64    // time from each epoll_wait's return to the next call: serving
	maxBatchNs  atomic.Uint64    // the longest such stretch after a wait that returned events
	sleptWaits  atomic.Uint64    // waits that outlasted the busy-poll window by sleepSlack: the reactor slept
	batches     [6]atomic.Uint64 // waits by events returned: 1, 2-3, 4-7, 8-15, 16-31, 32+
	_           [64]byte         // keep neighbouring reactors' counters off this cache line
}

// batchBuckets name the waits counted by events returned (epollCounters.batches).
var batchBuckets = [6]string{"batches_1", "batches_2_3", "batches_4_7", "batches_8_15", "batches_16_31", "batches_32_plus"}

// sleepSlack is how far past its busy-poll window a wait must last to count
// as the reactor having slept (which ends an IRQ suspension).
const sleepSlack = 10 * time.Microsecond

// noteWait counts one epoll_wait that returned n events after waited, the
// stretch served before it (busy, after a wait that returned events when
// served), and whether it slept past the busy-poll window.
func (c *epollCounters) noteWait(n int, waited, busy time.Duration, served bool, window time.Duration) {
	c.waitNs.Add(uint64(waited))
	c.busyNs.Add(uint64(busy))
	if served && uint64(busy) > c.maxBatchNs.Load() {
		c.maxBatchNs.Store(uint64(busy))
	}
	if waited > window+sleepSlack {
		c.sleptWaits.Add(1)
	}
	if n > 0 {
		c.batches[min(bits.Len(uint(n))-1, len(c.batches)-1)].Add(1)
	}
}

func (c *epollCounters) reset() {
	for _, v := range []*atomic.Uint64{&c.epollWaits,
		&c.events, &c.maxBatch, &c.emptyWaits, &c.fullBatches, &c.waitNs,
		&c.busyNs, &c.maxBatchNs, &c.sleptWaits, &c.batches[0], &c.batches[1], &c.batches[2], &c.batches[3],
		&c.batches[4], &c.batches[5]} {
		v.Store(0)
	}
}

// ResetStats clears epoll's counters (`stats reset`).
func (r *loop) ResetStats() { r.stats.reset() }

// ReactorStats adds epoll's own `stats reactors` lines after the routing
// lines every engine has.
func (r *loop) ReactorStats(add func(name, value string), p string) {
	u := func(name string, v uint64) { add(p+name, strconv.FormatUint(v, 10)) }
	u("epoll_waits", r.stats.epollWaits.Load())
	u("events", r.stats.events.Load())
	u("max_batch", r.stats.maxBatch.Load())
	u("empty_waits", r.stats.emptyWaits.Load())
	u("full_batches", r.stats.fullBatches.Load())
	u("wait_us", r.stats.waitNs.Load()/1000)
	u("busy_us", r.stats.busyNs.Load()/1000)
	u("max_batch_us", r.stats.maxBatchNs.Load()/1000)
	u("slept_waits", r.stats.sleptWaits.Load())
	for i, name := range batchBuckets {
		u(name, r.stats.batches[i].Load())
	}
	u("busy_poll_usecs", uint64(r.params.BusyPollUsecs))
	u("busy_poll_budget", uint64(r.params.BusyPollBudget))
	prefer := uint64(0)
	if r.params.PreferBusyPoll {
		prefer = 1
	}
	u("prefer_busy_poll", prefer)
	u("max_events", uint64(r.eng.ecfg.MaxEvents))
	reactor.WritePollLines(add, p, r.eng.ecfg, r.NAPIID.Load())
}
