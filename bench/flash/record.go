package flash

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gocached/gocached/bench/scenario"
)

// Latency is one histogram's summary, in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{Count: h.TotalCount(), P50: float64(h.ValueAtQuantile(50)) / 1e3, P99: float64(h.ValueAtQuantile(99)) / 1e3}
}

// Record is one measured run of one target.
type Record struct {
	Target  string `json:"target"`
	Version string `json:"version"` // the server's, from stats
	Round   int    `json:"round"`
	// FlashTier is whether the server reported extstore counters: a build
	// without a flash tier caches at most -m, whatever ext_path says.
	FlashTier bool         `json:"flash_tier"`
	Records   int          `json:"records"`
	Load      LoadResult   `json:"load"`
	Settle    SettleResult `json:"settle"`
	Census    Census       `json:"census"` // records missing / in RAM / on flash before the measured phase

	// Client side of the measured phase.
	Gets         int64   `json:"gets"`
	Hits         int64   `json:"hits"`
	Errors       int64   `json:"errors"`
	Fills        int64   `json:"fills"` // sets after a miss
	FillsRefused int64   `json:"fills_refused"`
	FirstError   string  `json:"first_error,omitempty"`
	Seconds      float64 `json:"seconds"`
	QPS          float64 `json:"qps"`
	All          Latency `json:"all"`
	Miss         Latency `json:"misses"`

	// The tagged phase (each get after a `me` of its key): latency of RAM
	// and flash hits, and the flash hits it counted against the server's
	// get_extstore over the same phase.
	TaggedGets        int64   `json:"tagged_gets"`
	TaggedFlashHits   int64   `json:"tagged_flash_hits"`
	TaggedGetExtstore int64   `json:"tagged_get_extstore"`
	RAM               Latency `json:"ram_hits"`
	Flash             Latency `json:"flash_hits"`

	// Server side of the measured phase (stats deltas).
	CmdGet      int64 `json:"cmd_get"`
	GetHits     int64 `json:"get_hits"`
	GetExtstore int64 `json:"get_extstore"`
	MissFromExt int64 `json:"miss_from_extstore"`
	Recached    int64 `json:"recache_from_extstore"`

	ServerCPUPct float64 `json:"server_cpu_pct"`
	NsPerReq     float64 `json:"ns_per_req"` // server CPU (schedstat) per request: gets and fill sets
	StealPct     float64 `json:"steal_pct"`  // of the whole machine
	// OtherProcsPct is the machine's busy time (sampled ticks) less the
	// server's and the client's, in percent of the machine: other tenants,
	// and interrupts that hit an idle CPU. The disturbance flag reads it.
	OtherProcsPct float64 `json:"other_processes_pct"`
	// OutsidePct is the server CPU's busy time outside the server's
	// threads, in percent of the phase: other processes there, and
	// interrupt and idle-exit work no thread is charged for.
	OutsidePct   float64 `json:"server_cpu_outside_server_pct"`
	RSS          int64   `json:"rss_bytes"` // at the end of the measured phase
	PeakRSS      int64   `json:"peak_rss_bytes"`
	ExtFileBytes int64   `json:"ext_file_bytes"` // disk blocks the ext_path file holds
	// ExtCachedBytes is how much of the file was in the page cache at the
	// end: flash reads of those pages were memory copies.
	ExtCachedBytes int64 `json:"ext_cached_bytes"`

	// Disturbed says why the run is left out of the medians: too much
	// steal, or too much else on the server's CPU.
	Disturbed string `json:"disturbed,omitempty"`
	Error     string `json:"error,omitempty"`
}

// judge marks the run disturbed when steal or other processes passed
// their limits.
func (r *Record) judge(maxSteal, maxOther float64) {
	switch {
	case r.StealPct > maxSteal:
		r.Disturbed = fmt.Sprintf("steal %.1f %%", r.StealPct)
	case r.OtherProcsPct > maxOther:
		r.Disturbed = fmt.Sprintf("other processes %.1f %%", r.OtherProcsPct)
	}
}

// HitRatio is the server's get_hits over cmd_get in the measured phase.
func (r *Record) HitRatio() float64 {
	if r.CmdGet == 0 {
		return 0
	}
	return float64(r.GetHits) / float64(r.CmdGet)
}

// FlashShare is the fraction of hits the server served from flash.
func (r *Record) FlashShare() float64 {
	if r.GetHits == 0 {
		return 0
	}
	return float64(r.GetExtstore) / float64(r.GetHits)
}

// fillClient copies the measured phase's tally.
func (r *Record) fillClient(t *Tally) {
	r.Gets, r.Hits, r.Errors, r.FirstError, r.Seconds = t.Gets, t.Hits, t.Errors, t.FirstError, t.Seconds
	r.Fills, r.FillsRefused = t.Fills, t.FillsRefused
	if t.Seconds > 0 {
		r.QPS = float64(t.Gets) / t.Seconds
	}
	r.All, r.Miss = latencyOf(t.All), latencyOf(t.Miss)
}

// fillTagged copies the tagged phase's split and the server's flash reads
// over it.
func (r *Record) fillTagged(t *Tally, before, after Stats) {
	r.TaggedGets, r.TaggedFlashHits = t.Gets, t.HitsBy[OnFlash]
	r.TaggedGetExtstore = Delta(before, after, statGetExtstore)
	r.RAM, r.Flash = latencyOf(t.Hit[InRAM]), latencyOf(t.Hit[OnFlash])
	r.Errors += t.Errors
	if r.FirstError == "" {
		r.FirstError = t.FirstError
	}
}

// Agreement is the tagged phase's flash hits over the server's count of
// flash reads in it: 1 when the split is the server's; -1 with no flash
// reads.
func (r *Record) Agreement() float64 {
	if r.TaggedGetExtstore == 0 {
		return -1
	}
	return float64(r.TaggedFlashHits) / float64(r.TaggedGetExtstore)
}

// fillServer takes the server's counters over the phase.
func (r *Record) fillServer(before, after Stats) {
	r.Version = after["version"]
	r.CmdGet = Delta(before, after, statCmdGet)
	r.GetHits = Delta(before, after, statGetHits)
	r.GetExtstore = Delta(before, after, statGetExtstore)
	r.MissFromExt = Delta(before, after, statGetMissExt)
	r.Recached = Delta(before, after, statRecached)
}

// userHz is the unit of /proc/stat's ticks.
const userHz = 100

// cpuDelta is what the CPU counters say about one phase.
type cpuDelta struct {
	runNs    uint64  // the server's exact run time (schedstat)
	seconds  float64 // wall time between the samples
	all      scenario.SystemCPU
	core     scenario.SystemCPU // the server's CPU
	ownTicks uint64             // sampled process ticks of the server and the client
}

// fillCPU turns the phase's CPU counters into rates. The core's busy time
// is its wall time less idle, iowait and steal (exact under NO_HZ, where
// sampled busy ticks miss short bursts), never below its sampled busy
// ticks. Other processes are sampled ticks against sampled ticks.
func (r *Record) fillCPU(d cpuDelta) {
	if d.seconds > 0 {
		r.ServerCPUPct = 100 * float64(d.runNs) / 1e9 / d.seconds
		wall := d.seconds * userHz
		busy := max(wall-float64(d.core.Idle+d.core.IOWait+d.core.Steal), float64(d.core.Busy()), 0)
		r.OutsidePct = max(0, 100*(busy/userHz-float64(d.runNs)/1e9)/d.seconds)
	}
	if n := r.Gets + r.Fills; n > 0 {
		r.NsPerReq = float64(d.runNs) / float64(n)
	}
	if t := d.all.Total(); t > 0 {
		r.StealPct = 100 * float64(d.all.Steal) / float64(t)
		// A tick taken in an interrupt goes to the machine's irq or softirq
		// count and also to the stime of the task it interrupted, so the
		// server's ticks are compared with every busy tick, not only the
		// user and system ones (a busy server's softirq ticks would hide
		// other processes otherwise).
		r.OtherProcsPct = 100 * max(0, float64(d.all.Busy())-float64(d.ownTicks)) / float64(t)
	}
}
