package config

import (
	"log/slog"

	"github.com/gocached/gocached/internal/protocol"
)

// Extended is what -o's suboptions mean to the server, decoded once when
// the command line is read (memcached reads each where it uses it; here
// the replays of "last one wins" and of no_modern live in one place).
type Extended struct {
	list []extSetting // as given, for Log

	Tuning       protocol.Tuning // the knobs `stats settings` reports
	SlabChunkMax int             // slab_chunk_max in bytes, defaulted from -I
	SlabSizes    []int           // slab_sizes: the classes `stats slabs` shows
	HashPower    int             // hashpower; 0 without it
	NoHashExpand bool            // no_hashexpand
	TrackSizes   bool            // track_sizes: `stats sizes` from the start
	// PlainLRU: memcached's LRU maintainer, and with it the segmented
	// LRU, is off (no_modern, no_lru_maintainer; lru_maintainer undoes).
	PlainLRU bool
	// TemporaryTTL turns memcached's TEMP LRU on when HasTemporaryTTL.
	TemporaryTTL    int64
	HasTemporaryTTL bool

	// Flash is extstore (ext_path and the ext_* options); nil without
	// ext_path.
	Flash *Flash

	// LRUCrawlerOff is no_lru_crawler or no_modern (a later lru_crawler
	// undoes it): memcached starts without its LRU crawler.
	LRUCrawlerOff bool

	watcherLogbufSize int // watcher_logbuf_size in bytes; 0: not given
}

// decodeExtended reads the suboptions once the checks have passed on them.
func decodeExtended(list []extSetting, itemSize int) Extended {
	e := Extended{
		list:         list,
		Tuning:       extTuning(list),
		SlabChunkMax: int(slabChunkMax(list, itemSize)),
		SlabSizes:    extSlabSizes(list),
		HashPower:    extHashPower(list),
		NoHashExpand: extHas(list, "no_hashexpand"),
		TrackSizes:   extHas(list, "track_sizes"),
		PlainLRU:     lruMaintainerOff(list),
		Flash:        extFlash(list),
	}
	if v, given := extLast(list, "temporary_ttl"); given {
		e.TemporaryTTL, e.HasTemporaryTTL = int64(cAtoi(v)), true
	}
	e.LRUCrawlerOff, e.watcherLogbufSize = crawlerAndWatcher(list)
	return e
}

// Apply puts the suboptions the protocol obeys into its Settings.
func (e *Extended) Apply(s *protocol.Settings) {
	if e.watcherLogbufSize > 0 {
		s.WatcherLogbufSize = e.watcherLogbufSize
	}
	s.LRUCrawlerDisabled = e.LRUCrawlerOff
	s.LRUMaintainerDisabled = e.PlainLRU
	s.HashPowerInit = e.HashPower
	tu := e.Tuning
	s.Tuning = &tu
}

// Log says, once per suboption, what it does in gocached.
func (e *Extended) Log(log *slog.Logger) { logExtOptions(e.list, log) }
