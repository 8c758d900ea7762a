package protocol

import (
	"math"
	"strconv"
	"sync"
)

// adminState is what the admin commands change at run time and `stats
// settings` reports: memcached's LRU crawler switch and pacing, the slab
// automover (level, ratio, freeratio, window) and LRU tuning knobs. The
// automover's and the LRU's are handed to the store (syncAutomove,
// syncLRU); the others only record what the client asked. The zero value
// holds memcached's defaults (see defaults).
type adminState struct {
	mu  sync.Mutex
	set bool // the fields below hold values (else memcached's defaults apply)

	crawlerOff     bool
	crawlerSleep   uint32
	crawlerToCrawl uint32
	automove       uint32
	automoveRatio  float64
	automoveWindow uint32  // slab_automove_window, seconds
	automoveFree   float64 // slab_automove_freeratio
	hotPct         uint32
	warmPct        uint32
	hotFactor      float64
	warmFactor     float64
	segmented      bool
	crawlerStarts  uint64 // lru_crawler_starts: crawls and metadumps begun
}

// adminUpdate runs fn on the admin state under its lock, after filling in
// the defaults.
func (e *Env) adminUpdate(fn func(a *adminState)) {
	a := &e.admin
	a.mu.Lock()
	defer a.mu.Unlock()
	a.defaults(e.Settings)
	fn(a)
}

// adminSnapshot returns a copy of the admin state for `stats settings`.
func (e *Env) adminSnapshot() adminSnapshot {
	a := &e.admin
	a.mu.Lock()
	defer a.mu.Unlock()
	a.defaults(e.Settings)
	return adminSnapshot{
		crawler: !a.crawlerOff, crawlerSleep: a.crawlerSleep, crawlerToCrawl: a.crawlerToCrawl,
		automove: a.automove, automoveRatio: a.automoveRatio,
		automoveWindow: a.automoveWindow, automoveFreeRatio: a.automoveFree,
		hotPct: a.hotPct, warmPct: a.warmPct, hotFactor: a.hotFactor, warmFactor: a.warmFactor,
		segmented:     a.segmented,
		crawlerStarts: a.crawlerStarts,
	}
}

// defaults sets memcached's start-up values, once: its built-in defaults
// and what the command line chose (st may be nil).
func (a *adminState) defaults(st *Settings) {
	if a.set {
		return
	}
	a.set = true
	a.crawlerOff = st != nil && st.LRUCrawlerDisabled
	// memcached's lru_segmented follows the maintainer's switches (on by
	// default; no_lru_maintainer and no_modern turn both off), then `lru
	// mode`.
	a.segmented = st == nil || !st.LRUMaintainerDisabled
	tu := st.tuning() // memcached's defaults and what -o changed
	a.crawlerSleep, a.crawlerToCrawl = tu.CrawlerSleep, tu.CrawlerToCrawl
	a.automove, a.automoveRatio = tu.SlabAutomove, tu.AutomoveRatio
	a.automoveWindow, a.automoveFree = tu.AutomoveWindow, tu.AutomoveFreeRatio
	a.hotPct, a.warmPct = tu.HotPct, tu.WarmPct
	a.hotFactor, a.warmFactor = tu.HotFactor, tu.WarmFactor
}

type adminSnapshot struct {
	crawler                      bool
	crawlerSleep, crawlerToCrawl uint32
	automove                     uint32
	automoveRatio                float64
	automoveWindow               uint32
	automoveFreeRatio            float64
	hotPct, warmPct              uint32
	hotFactor, warmFactor        float64
	segmented                    bool
	crawlerStarts                uint64
}

// parseDouble behaves like memcached's safe_strtod: strtod must consume
// digits and be followed by whitespace or the token's end.
func parseDouble(b []byte) (float64, bool) {
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isCSpace(b[j]) {
		j++
	}
	if i == j {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b[i:j]), 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// fmt2 renders a float as C's "%.2f".
func fmt2(v float64) string {
	// C's printf spells the values strtod lets through as nan and inf.
	switch {
	case math.IsNaN(v) && math.Signbit(v):
		return "-nan"
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
