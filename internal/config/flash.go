package config

import (
	"math"
	"strconv"
	"time"

	"github.com/gocached/gocached/internal/extstore"
)

// Flash is memcached's extstore as -o ext_path and the ext_* options set
// it up: the engine's files and sizes, the compaction policy, and the
// rules for which items go to flash. The server opens the engine from it.
type Flash struct {
	Engine extstore.Config
	Policy extstore.Policy
	// ItemSize is ext_item_size: values at least this long may move to
	// flash.
	ItemSize int
	// ItemAge is ext_item_age in seconds: an item idle this long moves
	// even without memory pressure; math.MaxUint32 (memcached's UINT_MAX,
	// its default) means only memory pressure moves items.
	ItemAge uint32
	// LowTTL is ext_low_ttl: items with fewer seconds left go to their
	// own pages, which free themselves as the items expire.
	LowTTL uint32
	// RecacheRate is ext_recache_rate: one read in this many brings a
	// flash item back into memory.
	RecacheRate uint32
	// MaxSleep is ext_max_sleep: the longest the background writers idle.
	MaxSleep time.Duration
}

// memcached 1.6.45's extstore defaults (memcached.c settings_init).
const (
	defaultExtItemSize    = 512
	defaultExtRecacheRate = 2000
	defaultExtMaxSleep    = time.Second
	defaultExtMaxFrag     = 0.8
)

// extFlash builds Flash from the suboptions, or nil without ext_path,
// reading each as memcached's storage_read_config does (the checks have
// passed): ext_page_size and ext_wbuf_size in megabytes, the last of each
// given wins, every ext_path adds a file. ext_compact_under left at 0 sets
// both thresholds to 1 % of the last file's pages (storage_init), which
// overrides an ext_drop_under given alone, as in memcached.
func extFlash(list []extSetting) *Flash {
	var files []extstore.FileSpec
	for _, s := range list {
		if s.name == "ext_path" {
			f, err := extstore.ParsePath(s.value)
			if err != nil {
				return nil // refused by checkExt already
			}
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil
	}
	f := &Flash{
		Engine:      extstore.DefaultConfig(files...),
		ItemSize:    defaultExtItemSize,
		ItemAge:     math.MaxUint32,
		RecacheRate: defaultExtRecacheRate,
		MaxSleep:    defaultExtMaxSleep,
	}
	f.Policy.MaxFrag = defaultExtMaxFrag
	for _, s := range list {
		n, _ := cStrtoul(s.value)
		switch s.name {
		case "ext_page_size":
			f.Engine.PageSize = uint64(uint32(n) << 20) // memcached's unsigned int wraps
		case "ext_wbuf_size":
			f.Engine.WbufSize = uint64(uint32(n) << 20)
		case "ext_threads":
			f.Engine.Threads = int(uint32(n))
		case "ext_io_depth":
			f.Engine.IODepth = int(uint32(n))
		case "ext_item_size":
			f.ItemSize = int(uint32(n))
		case "ext_item_age":
			f.ItemAge = uint32(n)
		case "ext_low_ttl":
			f.LowTTL = uint32(n)
		case "ext_recache_rate":
			f.RecacheRate = uint32(n)
		case "ext_compact_under":
			f.Policy.CompactUnder = uint64(uint32(n))
		case "ext_drop_under":
			f.Policy.DropUnder = uint64(uint32(n))
		case "ext_max_sleep":
			f.MaxSleep = time.Duration(uint32(n)) * time.Microsecond
		case "ext_max_frag":
			if v, err := strconv.ParseFloat(s.value, 64); err == nil {
				f.Policy.MaxFrag = v
			}
		case "ext_drop_unread":
			f.Policy.DropUnread = true
		}
	}
	if f.Policy.CompactUnder == 0 {
		def := extstore.DefaultPolicy(f.Engine)
		f.Policy.CompactUnder, f.Policy.DropUnder = def.CompactUnder, def.DropUnder
	}
	return f
}

// checkFlashFiles is memcached's storage_check_config after the -I and UDP
// checks: every file must hold at least one page (status 64).
func checkFlashFiles(f *Flash) error {
	if f == nil || f.Engine.PageSize == 0 {
		return nil // a zero page size fails at open, as memcached's init
	}
	for _, file := range f.Engine.Files {
		if file.Size/f.Engine.PageSize == 0 {
			return mcUsage("supplied ext_path has zero size, cannot use")
		}
	}
	return nil
}
