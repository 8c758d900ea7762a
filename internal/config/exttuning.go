package config

import (
	"strconv"

	"github.com/gocached/gocached/internal/protocol"
)

// defaultAutomoveWindow is memcached 1.6.45's slab_automove_window.
const defaultAutomoveWindow = 10

// extTuning reads the -o knobs of memcached internals gocached does not
// have into what `stats settings` reports, in command-line order and with
// memcached's readings (atoi, atof, strtoul; KB and MB where memcached
// multiplies): a later option overrides an earlier one, and no_modern
// switches off the slab mover, the automover and maxconns_fast and picks
// the jenkins hash, as memcached's does. extChecks has refused the values memcached refuses.
func extTuning(settings []extSetting) protocol.Tuning {
	tu := protocol.DefaultTuning()
	// memcached 1.6.34 and later average the automover's samples over 10
	// windows by default (30 before).
	tu.AutomoveWindow = defaultAutomoveWindow
	for _, e := range settings {
		v := e.value
		switch e.name {
		case "slab_reassign":
			tu.SlabReassign = true
		case "no_slab_reassign":
			tu.SlabReassign = false
		case "slab_automove":
			tu.SlabAutomove = 1
			if v != "" {
				tu.SlabAutomove = uint32(cAtoi(v))
			}
		case "no_slab_automove":
			tu.SlabAutomove = 0
		case "slab_automove_ratio":
			tu.AutomoveRatio = cAtof(v)
		case "slab_automove_window":
			tu.AutomoveWindow = uint32(cAtoi(v))
		case "slab_automove_freeratio":
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				tu.AutomoveFreeRatio = f
			}
		case "tail_repair_time":
			tu.TailRepairTime = cAtoi(v)
		case "lru_crawler_sleep":
			tu.CrawlerSleep = uint32(cAtoi(v))
		case "lru_crawler_tocrawl":
			if n, ok := cStrtoul(v); ok {
				tu.CrawlerToCrawl = uint32(n)
			}
		case "hot_lru_pct":
			tu.HotPct = uint32(cAtoi(v))
		case "warm_lru_pct":
			tu.WarmPct = uint32(cAtoi(v))
		case "hot_max_factor":
			tu.HotFactor = cAtof(v)
		case "warm_max_factor":
			tu.WarmFactor = cAtof(v)
		case "worker_logbuf_size":
			if n, ok := cStrtoul(v); ok {
				tu.WorkerLogbufSize = n << 10
			}
		case "read_buf_mem_limit":
			if n, ok := cStrtoul(v); ok {
				tu.ReadBufMemLimit = uint64(uint32(n << 20)) // memcached's field is 32 bits
			}
		case "ssl_wbuf_size":
			if n, ok := cStrtoul(v); ok {
				tu.SSLWbufSize = uint64(uint32(n << 10)) // memcached's field is 32 bits
			}
		case "maxconns_fast":
			tu.MaxConnsFast = true
		case "no_maxconns_fast":
			tu.MaxConnsFast = false
		case "hash_algorithm":
			tu.HashAlgorithm = v // checked: jenkins, murmur3 or xxh3
		case "no_modern":
			tu.SlabReassign, tu.SlabAutomove, tu.MaxConnsFast = false, 0, false
			tu.HashAlgorithm = "jenkins"
		}
	}
	return tu
}

// extSocketMark is -o sock_cookie_id as memcached reads it (safe_strtoul
// into 32 bits; a value it cannot read leaves the sockets unmarked).
func extSocketMark(settings []extSetting) uint32 {
	v, given := extLast(settings, "sock_cookie_id")
	if !given {
		return 0
	}
	if n, ok := cStrtoul(v); ok && n <= 1<<32-1 {
		return uint32(n)
	}
	return 0
}
