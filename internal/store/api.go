package store

// This file is the contract between the store and its callers (internal/protocol).
// The names and signatures here are stable; the implementation behind them may change.

// Config holds the settings memcached takes on its command line that concern items.
type Config struct {
	MemoryLimit      int64 // -m, in bytes: bounds all item memory
	MaxItemSize      int   // -I, in bytes: largest key+value+overhead accepted
	DisableEvictions bool  // -M: return OutOfMemory instead of evicting
	DisableCAS       bool  // -C: CAS uniques are always 0
	// GrowthFactor (-f, default 1.25) and MinChunk (-n, default 48) shape
	// the size classes `stats slabs` and `stats items` report, as they
	// shape memcached's slab classes; 0 means the default.
	GrowthFactor float64
	MinChunk     int
	// SlabChunkMax is memcached's slab_chunk_max: an item larger than it
	// (its memcached size, Item.Size) is one memcached stores in chunks,
	// and incr/decr refuses it as non-numeric, before comparing a CAS.
	// 0 means no item is.
	SlabChunkMax int
	// SlabSizes is -o slab_sizes, parsed (memcached has checked it): the
	// chunk sizes of the classes before the last (SlabChunkMax), in place
	// of the ones GrowthFactor and MinChunk make. Empty means none given.
	SlabSizes []int
	// LargePages is memcached's -L: the arena's pages within the limit are
	// prefaulted and advised to use huge pages; like memcached's
	// preallocated memory, the limit can then not change at run time
	// (SetMemoryLimit refuses).
	LargePages bool
	// MemoryFile is memcached's -e: the arena is a shared mapping of this
	// file, and a store stopped with SaveState comes back with its items
	// when the next New gets the same file and settings (memfile.go).
	MemoryFile string
	// HashPower is memcached's -o hashpower: the hash table's starting
	// power of two (0 means memcached's 16). gocached's index sizes itself
	// per shard; the level is what `stats` reports as hash_power_level,
	// and it grows by memcached's rule (hashpower.go). NoHashExpand is
	// -o no_hashexpand: it never grows.
	HashPower    int
	NoHashExpand bool
	// TrackSizes is memcached's -o track_sizes: the item size histogram
	// of `stats sizes` is on from the start (sizes.go).
	TrackSizes bool
	// PlainLRU is memcached without its segmented LRU (-o
	// no_lru_maintainer, no_modern): one queue per class, no maintainer,
	// and a read moves an item up at most once a minute (shard.go's
	// markRead).
	PlainLRU bool
	// CrawlerOff starts the store as memcached without its LRU crawler
	// (-o no_lru_crawler, no_modern): the reclaimer leaves expired items
	// until met (SetCrawler). PlainLRU has the same effect, for good.
	CrawlerOff bool
	// Premalloced is memcached's test hook T_MEMD_INITIAL_MALLOC: bytes
	// taken as allocated already. total_malloced starts there and the
	// pages get only what is left of MemoryLimit, so a test can reach
	// the limit of a large -m (64bit.t fakes 4 GiB) without the memory.
	Premalloced int64
	// Started is the server's start, unix seconds (memcached's
	// process_started, which `uptime` counts from). A memory file's
	// metadata keeps it, so a warm restart carries the first start on,
	// as memcached's does (Store.Started).
	Started int64
	// Now returns the current unix time in seconds. Nil means the store's own
	// coarse clock. Tests set it to move time by hand.
	Now func() int64
	// Shards is how many lock stripes the index has (rounded up to a
	// power of two, at most 256); 0 picks by GOMAXPROCS, 16 per P. Each
	// shard carries its own index and per-class counters (over half a
	// megabyte at the default on 2 CPUs), so tests that build a store per
	// input ask for one.
	Shards int
	// ArenaReserve is the address space the arena reserves, so that
	// cache_memlimit can raise the limit into it; 0 means four times
	// MemoryLimit, at least 64 GiB. The reservation costs no memory, but
	// it is only given back when the Store is garbage, so a test that
	// makes a store per input asks for little: thousands of 64 GiB
	// reservations waiting for a collection use up the address space.
	ArenaReserve int64
	// Flash is memcached's extstore (-o ext_path): cold values go to its
	// engine (flash.go). Nil: none.
	Flash *FlashConfig
}

// Mode selects the storage command semantics of Store.Set.
type Mode uint8

const (
	ModeSet Mode = iota
	ModeAdd
	ModeReplace
	ModeAppend
	ModePrepend
	ModeCAS
)

// Result is the outcome of a storage or arithmetic command.
type Result uint8

const (
	Stored      Result = iota // STORED / hit
	NotStored                 // NOT_STORED (add on existing, replace/append/prepend on missing)
	Exists                    // EXISTS (cas mismatch)
	NotFound                  // NOT_FOUND
	TooLarge                  // SERVER_ERROR object too large for cache
	OutOfMemory               // SERVER_ERROR out of memory storing object
	NonNumeric                // CLIENT_ERROR cannot increment or decrement non-numeric value
)

// NewCAS is a CAS value the client chose for an item it changes (memcached's
// meta E flag), used instead of the next generated unique when Set.
type NewCAS struct {
	Value uint64
	Set   bool
	// Kept: Value is the item's own CAS carried over to its new version
	// (md x), not one the client chose, so it still orders the item
	// against a flush_all (shard.flushed).
	Kept bool
}

// chosen reports whether the client chose the CAS (recCASChosen).
func (c NewCAS) chosen() bool { return c.Set && !c.Kept }

// Meta describes a stored item as a reader sees it.
type Meta struct {
	Flags   uint32
	CAS     uint64
	Exptime int64 // absolute unix seconds; 0 = never expires
}

// Stats is a snapshot of the store's counters, named after memcached's stats fields.
type Stats struct {
	CurrItems, TotalItems, Bytes               uint64
	CmdGet, CmdSet, CmdTouch, CmdFlush         uint64
	GetHits, GetMisses, GetExpired, GetFlushed uint64
	TouchHits, TouchMisses                     uint64
	DeleteHits, DeleteMisses                   uint64
	IncrHits, IncrMisses, DecrHits, DecrMisses uint64
	CasHits, CasMisses, CasBadval              uint64
	Evictions, Reclaimed, ExpiredUnfetched     uint64
	EvictedUnfetched, EvictedActive            uint64
	OutOfMemory                                uint64 // stores refused for lack of memory
	// RefsLost counts CopyValue calls that found their ValueRef released
	// (a large reply cut short, its connection closed: a bug, as a
	// ValueRef pins its value until released; cursor.go).
	RefsLost           uint64
	LimitMaxbytes      uint64
	TotalMallocedBytes uint64 // bytes of pages allocated for items
	SlabGlobalPagePool uint64 // pages no class owns (arena.go)
	// The segmented LRU's moves over all classes, and the maintainer's
	// passes (lru.go).
	MovesToCold, MovesToWarm, MovesWithinLRU, DirectReclaims uint64
	LRUMaintainerJuggles                                     uint64
	// The sweep's (memcached's LRU crawler's) reclaims and items looked
	// at, over all classes.
	CrawlerReclaimed, CrawlerItemsChecked uint64
	// LRUBumpsDropped counts moves out of COLD a read gave up for a busy
	// class lock (memcached's lru_bumps_dropped; shard.bumpFromCold).
	// `stats reset` does not clear it, as in memcached.
	LRUBumpsDropped uint64
	HashBytes       uint64 // bytes of the index
	HashPowerLevel  uint64
}

// ClassStats describes one slab class (or segment class) for `stats slabs` and `stats items`.
type ClassStats struct {
	ID                                                                             int
	ChunkSize                                                                      int
	ChunksPer                                                                      int // chunks per page
	TotalPages                                                                     int
	UsedChunks                                                                     uint64
	FreeChunks                                                                     uint64
	Items                                                                          uint64 // live items in the class
	MemRequested                                                                   uint64 // the items' sizes as memcached counts them (ITEM_ntotal)
	Evicted                                                                        uint64
	EvictedNonzero                                                                 uint64 // evicted items that had an exptime
	OldestAge                                                                      int64  // seconds COLD's tail item has gone unread (memcached's age)
	Outofmemory                                                                    uint64
	Reclaimed                                                                      uint64
	CrawlerReclaimed                                                               uint64 // expired or flushed items the sweep (memcached's LRU crawler) reclaimed
	CrawlerItemsChecked                                                            uint64 // items the sweep looked at
	ExpiredUnfetched                                                               uint64
	EvictedUnfetched                                                               uint64
	GetHits, CmdSet, DeleteHits, IncrHits, DecrHits, CasHits, CasBadval, TouchHits uint64
	// Temp is the class's items in memcached's TEMP LRU (templru.go), of
	// Items.
	Temp uint64
	// The segmented LRU: items per queue, seconds the HOT and WARM tails
	// have gone unread (OldestAge is COLD's), and the maintainer's and
	// allocations' moves (lru.go).
	NumberHot, NumberWarm, NumberCold, NumberTemp            uint64
	AgeHot, AgeWarm                                          int64
	EvictedActive                                            uint64
	EvictedTime                                              int64 // seconds the last evicted item had gone unread
	MovesToCold, MovesToWarm, MovesWithinLRU, DirectReclaims uint64
	HitsToHot, HitsToWarm, HitsToCold, HitsToTemp            uint64
}
