// Package store is gocached's cache: memcached's slab allocator and
// segmented LRU over memory the garbage collector never scans, with
// memcached's item semantics.
//
// # Layout
//
// Item memory is one arena (arena.go): a reserved region, mapped outside
// the Go heap on Linux, cut into 1 MiB pages that slab classes take one at
// a time, as memcached's do. The classes are memcached's (96-byte chunks
// growing by 1.25, or what -n, -f, -o slab_sizes and slab_chunk_max say);
// each cuts its pages into chunks of its size (slab.go), and an item takes
// one chunk of the smallest class that holds memcached's size of it
// (ITEM_ntotal), so the same items land in the same classes, and the same
// number fit in a page, as in memcached. A class gets a page from the
// global page pool, else a new one while the pages stay within -m, and
// always its first, as memcached's do_slabs_newslab. A freed chunk goes on
// its class's free list and is the next one handed out.
//
// A chunk holds a record: a 48-byte header (lengths, state bits, class,
// queue, flags, exptime, CAS, store and access times, and the links of
// its LRU queue, as arena offsets), the key and the value (record.go).
// Keys are spread over a power-of-two number of shards by their xxhash;
// a shard is a lock stripe with its own index, an open-addressing table in
// one []uint64 of a 28-bit hash tag and the record's arena offset/8 per
// entry (index.go). Neither the arena nor the indexes hold pointers, so a
// GC cycle costs the same with ten items or ten million.
//
// An item larger than the largest class's chunk (memcached's
// slab_chunk_max, half a page by default) is a chain of that class's
// chunks, as in memcached (chain.go); a Get callback is handed its value
// copied out whole, a ValueRef reads it across the chain.
//
// # LRU and eviction
//
// Each class keeps its items in memcached's HOT, WARM, COLD and TEMP
// queues (lru.go). New items enter HOT (TEMP for -o temporary_ttl); a read
// only sets the item's fetched bit, and a second one its active bit. An
// allocation that finds no free chunk and no page evicts COLD's tail, or
// when COLD has nothing to give moves HOT's tail down, up to ten times, as
// memcached's do_item_alloc_pull; the maintainer, run every 20 ms while
// the store is busy and once a second when idle (background.go), trims HOT
// and WARM to their share of the class's bytes and to an age limit, moving
// active items up to WARM and the rest down to COLD.
// The page mover (mover.go, `slabs reassign`) and the automover
// (automove.go) move pages between classes and to the pool.
//
// # Locks
//
// A shard's mutex guards its index, its counters and the records of its
// keys; a class's mutex guards its free list, its queues and the queue
// links. A shard's lock comes first; a class lock holder (an eviction,
// the maintainer, the mover) only tries the shard of an item it meets,
// and passes the item over if that shard is busy, as memcached passes an
// item whose lock it cannot take.
//
// # Records across lock releases
//
// A large value is sent in pieces over several turns of its connection:
// a ValueRef pins its record's chunk, which an unlink then leaves in place
// until the last ValueRef on it is released (cursor.go), as memcached's
// reference count keeps an item being sent. A value arriving in pieces is
// copied into a chunk reserved when its command line is parsed, invisible
// until committed (reserve.go). The protocol releases both when it is done
// with them, or when its connection goes.
//
// # Meta protocol state
//
// The meta commands need per-item state beyond value and flags: whether
// the item was read before (h), when it was last accessed (l), whether it
// was invalidated (stale, X), whether a client already holds its recache
// token (W/Z), and whether its key arrived base64-encoded. These are bits
// of the record header and its access time. Meta commands apply their
// flags in the client's order under the shard lock through an Item handle
// (item.go).
//
// # Time
//
// Exptimes follow memcached (0 never, up to 30 days relative, larger
// absolute, negative already expired) and are kept as absolute unix
// seconds. Expired items are found on access, at the LRU tails and by a
// background reclaimer that sweeps index slots a bounded batch at a time.
// flush_all is lazy, as in memcached: it sets oldest_live (and, with CAS
// on, oldest_cas, which makes it exact within a second), and items it
// invalidates stay until a lookup, a tail pull or the reclaimer meets
// them (flush.go).
//
// # Memory limit and warm restart
//
// SetMemoryLimit (cache_memlimit) changes how many pages the classes may
// take; pages already taken stay, and pool pages beyond the limit go back
// to the kernel (memlimit.go). With Config.MemoryFile (-e) the arena is a
// shared mapping of that file, and SaveState writes what a restart needs
// to find every record again (memfile.go). Config.LargePages (-L)
// prefaults the arena and fixes the limit, as memcached's preallocation.
//
// # Statistics
//
// Counters live in each shard under its lock, and the queues' and moves'
// in each class under its lock; both are summed on demand. mem_requested
// and bytes are memcached's item sizes, and hash_power_level grows by
// memcached's rule from the item count (hashpower.go).
package store
