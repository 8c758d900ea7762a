package store

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
)

const (
	relativeExpiryLimit = 60 * 60 * 24 * 30 // memcached's REALTIME_MAXDELTA
	defaultMaxItemSize  = 1 << 20
	// itemOverhead is what -I charges per item on top of key and value:
	// memcached 1.6's item header, key NUL, "\r\n" and 8-byte CAS (59 bytes;
	// 51 under -C), measured on memcached 1.6.18, so the largest accepted
	// value is the same byte for byte.
	itemOverhead      = 59
	itemOverheadNoCAS = 51
	clockTick         = 20 * time.Millisecond // the background loop's cadence while busy
)

// MaxKeyLen is memcached's key length limit; the protocol enforces it, and
// Set refuses longer keys as TooLarge (records keep the length in one byte).
const MaxKeyLen = 250

// Store is the cache. All methods are safe for concurrent use.
type Store struct {
	cfg       Config
	shards    []shard
	shardMask uint64
	classes   classTable
	slabs     *slabs
	maxValue  int // largest key+value length (MaxItemSize minus memcached's overhead)

	clock     atomic.Int64  // coarse unix seconds when cfg.Now is nil
	clockLazy atomic.Bool   // the loop sleeps in deep idle: readers turn the clock (deepidle.go)
	busy      atomic.Bool   // activity since the background loop's last round (background.go)
	noSweep   atomic.Bool   // the LRU crawler is off: the reclaimer leaves expired items (flush.go)
	debugTime debugClock    // memcached-debug's debugtime shift and pause (debugclock.go)
	hashPower atomic.Uint32 // memcached's hash_power_level (hashpower.go)
	memLimit  atomic.Int64  // the current -m in bytes (cache_memlimit changes it)
	hooks     *storeHooks
	resizeMu  sync.Mutex // one SetMemoryLimit at a time
	cmdFlush  atomic.Uint64
	juggles   atomic.Uint64 // LRU maintainer passes (lru.go)
	mover     mover         // the page mover (mover.go)
	automove  automover     // slab_automove (automove.go)

	debugLocks debugLocks // `debugitem lock` marks (debugitem.go)

	sizes   atomic.Pointer[sizeHist] // `stats sizes`; nil while off (sizes.go)
	sizesMu sync.Mutex               // one EnableSizes/DisableSizes at a time

	flash        *flashState  // extstore (flash.go); nil without
	memfile      *memFile     // -e's mapping; nil without one
	restoreNote  string       // what the memory file gave at start (RestoreReport)
	restartLines []string     // memcached's stderr lines for that (RestartLines)
	flashBack    flashRestore // what the memory file's restore did with flash items
	started      int64        // Config.Started, or the restored one (Started)

	stop      chan struct{}
	done      chan struct{}
	kick      chan struct{} // wakes an idle background loop (background.go)
	wakes     atomic.Uint64 // the background loop's rounds, for tests of its cadence
	closeOnce sync.Once
}

// New returns an empty store whose slab pages together take at most
// cfg.MemoryLimit bytes (and a page per class beyond, as memcached's).
// A MaxItemSize above half the memory limit is lowered to it, as memcached
// refuses such a setting.
func New(cfg Config) (*Store, error) {
	if cfg.MemoryLimit <= 0 {
		return nil, errors.New("store: memory limit must be positive")
	}
	if cfg.MaxItemSize <= 0 {
		cfg.MaxItemSize = defaultMaxItemSize
	}
	if half := cfg.MemoryLimit / 2; int64(cfg.MaxItemSize) > half {
		cfg.MaxItemSize = int(half)
	}
	overhead := itemOverhead
	if cfg.DisableCAS {
		overhead = itemOverheadNoCAS
	}
	if cfg.MaxItemSize <= overhead+recHeader {
		return nil, fmt.Errorf("store: memory limit %d bytes leaves no room for items", cfg.MemoryLimit)
	}
	items := cfg.MemoryLimit - max(cfg.Premalloced, 0) // bytes the pages may take
	if items <= 0 {
		return nil, fmt.Errorf("store: %d bytes taken as allocated already leave none of the %d-byte limit", cfg.Premalloced, cfg.MemoryLimit)
	}
	n := shardCount(cfg.Shards)
	var saved *memfileMeta
	var savedErr error
	if cfg.MemoryFile != "" {
		// A restore needs the saved shard count (it depended on
		// GOMAXPROCS, and the CAS uniques on it): take it when the rest
		// matches.
		saved, savedErr = readMemfileMeta(cfg.MemoryFile)
		if errors.Is(savedErr, errCorruptMeta) {
			// memcached aborts on an empty or unparsable metadata file
			// (restart.t: "Died with an empty metadata file").
			return nil, fmt.Errorf("store: %w", savedErr)
		}
		if saved != nil && saved.matches(cfg, memfilePages(items)) == nil {
			n = len(saved.Shards)
		}
	}
	s := &Store{
		cfg:       cfg,
		started:   cfg.Started,
		shards:    make([]shard, n),
		shardMask: uint64(n - 1),
		maxValue:  cfg.MaxItemSize - overhead,
		hooks:     &storeHooks{},
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		kick:      make(chan struct{}, 1),
	}
	s.hooks.temp.Store(tempSetting(defaultTemporaryTTL, false))
	lru := defaultLRUTuning
	lru.Flat = cfg.PlainLRU
	s.noSweep.Store(cfg.CrawlerOff)
	s.hooks.lru.Store(&lru)
	chunkMax := cfg.SlabChunkMax
	if chunkMax <= 0 {
		// memcached's default slab_chunk_max, half a page, or the largest
		// record when that is smaller.
		chunkMax = min(pageSize/2, (recSize(MaxKeyLen, s.maxValue)+7)&^7)
	}
	s.classes = newClassTable(chunkMax, cfg.MinChunk, cfg.GrowthFactor, cfg.SlabSizes)
	var err error
	var file []byte
	if cfg.MemoryFile != "" {
		if s.memfile, err = openMemFile(cfg.MemoryFile, int64(memfilePages(items))*pageSize); err != nil {
			return nil, err
		}
		file = s.memfile.mem
	}
	reserve, mapped := arenaReserve(items, cfg.ArenaReserve), true
	if heapArena {
		reserve, mapped = 0, false
	}
	a, err := newArena(items, reserve, file, mapped, cfg.LargePages)
	if err != nil {
		return nil, err
	}
	s.slabs = newSlabs(a, s.classes.sizes)
	s.slabs.noCAS = cfg.DisableCAS
	idBits := uint(bits.Len(uint(n - 1)))
	for i := range s.shards {
		sh := &s.shards[i]
		sh.id, sh.idBits = uint64(i), idBits
		sh.noEvict, sh.noCAS = cfg.DisableEvictions, cfg.DisableCAS
		sh.hooks = s.hooks
		sh.slabs = s.slabs
		sh.idx = newIndex(0)
		sh.idx.publish()
		sh.cls = make([]classCounters, len(s.classes.sizes))
	}
	if cfg.TrackSizes {
		s.enableSizes(true) // before a memory file's items are linked
	}
	s.initHashPower()
	s.initFlash()
	if s.memfile != nil {
		s.adoptMemoryFile(saved, savedErr)
	}
	if s.flash != nil {
		s.slabs.arena.prefill()
	}
	s.releaseArenaWhenUnreachable()
	s.memLimit.Store(cfg.MemoryLimit)
	s.clock.Store(time.Now().Unix())
	go s.background()
	if s.flash != nil {
		go func() {
			s.compactLoop(s.stop)
			close(s.flash.compactDone)
		}()
	}
	return s, nil
}

// heapArena puts a new store's arena on the Go heap, sized for the limit
// (cache_memlimit cannot raise it much): the race detector watches Go
// memory only, so a test sets it to see races on the records' bytes.
var heapArena bool

// shardCount picks a power of two: the one asked for (rounded up), or
// enough lock stripes that cores rarely meet on one.
func shardCount(asked int) int {
	want := asked
	if want <= 0 {
		want = 16 * runtime.GOMAXPROCS(0)
	}
	n := 1
	for n < want && n < maxShards {
		n *= 2
	}
	return n
}

// maxShards bounds the lock stripes: the shard is a hash's low bits.
const maxShards = 256

// arenaReserve is the address space the arena reserves for a limit, so
// that cache_memlimit can raise it later: at least 64 GiB (untouched pages
// cost nothing but page-table room), or four times the limit, within what
// the index can address. A reservation asked for replaces the rule (newArena
// still makes room for the limit).
func arenaReserve(limit, asked int64) int64 {
	if asked > 0 {
		return min(asked, maxArena)
	}
	return min(max(64<<30, 4*limit), maxArena)
}

// releaseArenaWhenUnreachable unmaps the arena once the Store is garbage:
// the slabs do not point back at the Store, and no slice of the arena
// outlives the callback it was handed to.
func (s *Store) releaseArenaWhenUnreachable() {
	runtime.AddCleanup(s, func(sl *slabs) { sl.arena.release() }, s.slabs)
}

// Close stops the background goroutine and waits for a page move under
// way to end. The store stays usable, but the coarse clock no longer
// advances and expired items are only found lazily.
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		if s.flash != nil {
			<-s.flash.compactDone
		}
	})
	s.waitMover()
}

// waitMover returns once no page move is under way (mover.go).
func (s *Store) waitMover() {
	m := &s.mover
	for {
		m.statMu.Lock()
		d := m.done
		m.statMu.Unlock()
		if d == nil {
			return
		}
		<-d
		m.statMu.Lock()
		same := m.done == d
		m.statMu.Unlock()
		if same {
			return
		}
	}
}

// Now returns the store's current time in unix seconds.
func (s *Store) Now() int64 {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	if s.clockLazy.Load() {
		s.catchUpClock(time.Now())
	}
	return s.clock.Load()
}

// MaxValueSize reports the largest value length Set accepts for a key of
// keyLen bytes and these client flags.
func (s *Store) MaxValueSize(keyLen int, flags uint32) int {
	return max(0, s.valueRoom(keyLen, flags))
}

// flagsSuffix is what nonzero client flags add to a memcached item (its
// 4-byte suffix), and so take from the room for the value.
const flagsSuffix = 4

// valueRoom is the largest value a key of keyLen bytes with flags may have:
// -I less memcached's item overhead, the key, and 4 bytes for nonzero
// flags. It may be negative.
func (s *Store) valueRoom(keyLen int, flags uint32) int {
	room := s.maxValue - keyLen
	if flags != 0 {
		room -= flagsSuffix
	}
	return room
}

// shardFor is where every keyed operation starts; it also tells the
// background loop that the store is in use.
func (s *Store) shardFor(key []byte) (*shard, uint32) {
	return s.shardHashed(HashKey(key))
}

// shardHashed is shardFor for a key whose hash is known.
func (s *Store) shardHashed(h KeyHash) (*shard, uint32) {
	s.markBusy()
	return &s.shards[uint64(h)&s.shardMask], tagOf(uint64(h))
}

// KeyHash is the hash the store places a key by. A caller that hashed a
// key already (to prefetch it) hands it to the lookup that follows, the
// ...Hashed calls, rather than have the key hashed twice.
type KeyHash uint64

// HashKey is key's KeyHash.
func HashKey(key []byte) KeyHash { return KeyHash(xxhash.Sum64(key)) }

// absExptime turns a client exptime into absolute unix seconds (0 = never),
// by memcached's rules; the result is clamped to the 32 bits records hold.
func absExptime(exptime, now int64) uint32 {
	var abs int64
	switch {
	case exptime == 0:
		return 0
	case exptime < 0:
		abs = now - 1
	case exptime <= relativeExpiryLimit:
		abs = now + exptime
	default:
		abs = exptime
	}
	return clampTime(abs)
}

func clampTime(t int64) uint32 {
	switch {
	case t < 1:
		return 1
	case t > 1<<32-1:
		return 1<<32 - 1
	}
	return uint32(t)
}

func (s *Store) meta(r rec) Meta {
	m := Meta{Flags: r.flags(), Exptime: int64(r.exptime())}
	if !s.cfg.DisableCAS {
		m.CAS = r.cas()
	}
	return m
}
