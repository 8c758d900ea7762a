package protocol

// Tuning is memcached's start-up values of the knobs whose mechanism
// gocached does not have (the slab page mover, the segmented LRU's
// juggling, the crawler's pacing, the worker log and read buffer pools):
// what -o set, reported by `stats settings` as memcached reports it. The
// run-time ones (automove, the LRU percentages and factors, crawler sleep
// and tocrawl) start here and then follow the admin commands.
type Tuning struct {
	SlabReassign      bool    // slab_reassign (no_slab_reassign, no_modern: off)
	SlabAutomove      uint32  // slab_automove (no_slab_automove, no_modern: 0)
	AutomoveRatio     float64 // slab_automove_ratio
	AutomoveWindow    uint32  // slab_automove_window
	AutomoveFreeRatio float64 // slab_automove_freeratio
	TailRepairTime    int     // tail_repair_time, seconds
	CrawlerSleep      uint32  // lru_crawler_sleep, microseconds
	CrawlerToCrawl    uint32  // lru_crawler_tocrawl
	HotPct, WarmPct   uint32  // hot_lru_pct, warm_lru_pct
	HotFactor         float64 // hot_max_factor
	WarmFactor        float64 // warm_max_factor
	WorkerLogbufSize  uint64  // worker_logbuf_size, in bytes (KB on the command line)
	ReadBufMemLimit   uint64  // read_buf_mem_limit, in bytes (MB on the command line)
	SSLWbufSize       uint64  // ssl_wbuf_size, in bytes (KB on the command line); crypto/tls buffers its own records
	// MaxConnsFast (no_maxconns_fast, no_modern: off): a client beyond -c
	// is refused at once with an error line. Off, memcached leaves it to
	// wait until a client leaves, and `stats` has no rejected_connections.
	MaxConnsFast bool
	// HashAlgorithm is hash_algorithm: "murmur3" (memcached's default),
	// "jenkins" (also what no_modern sets) or "xxh3". memcached hashes
	// `stats detail` prefixes with it, so it orders `stats detail dump`.
	HashAlgorithm string
}

// DefaultTuning is memcached 1.6.18's defaults.
func DefaultTuning() Tuning {
	return Tuning{
		SlabReassign: true, SlabAutomove: 1, AutomoveRatio: 0.8, AutomoveWindow: 30,
		AutomoveFreeRatio: 0.01, CrawlerSleep: 100, HotPct: 20, WarmPct: 40,
		HotFactor: 0.2, WarmFactor: 2.0, WorkerLogbufSize: 64 << 10, SSLWbufSize: 16 << 10, MaxConnsFast: true,
		HashAlgorithm: "murmur3",
	}
}

// tuning is s's Tuning, or the defaults when none was set.
func (s *Settings) tuning() Tuning {
	if s == nil || s.Tuning == nil {
		return DefaultTuning()
	}
	return *s.Tuning
}
