// Package store is gocached's cache: a memory-bounded, sharded key/value
// store with memcached's item semantics, built so that the garbage
// collector's work does not grow with the number of items.
//
// # Layout
//
// Keys are spread over a power-of-two number of shards by their xxhash; each
// shard has its own mutex, so there is no global lock. A shard owns one ring:
// a single []byte of MemoryLimit/shards bytes, allocated up front (the kernel
// backs it with memory only as it is written; on Linux it is advised to use
// transparent huge pages, which cuts TLB misses on random reads). Items are
// records appended at the ring's head: a 32-byte header (lengths, state bits,
// size class, flags, exptime, CAS, store and access times), the key, the
// value, padding to 8 bytes. The shard's index is an open-addressing hash
// table in one []uint64, a 32-bit hash tag and the record's offset/8 per
// entry. Neither the rings nor the index contain pointers, so a GC cycle
// costs the same with ten items or ten million (about 0.2 ms with 10 million
// 100-byte items, each costing about 46 bytes beyond its key and value: the
// header, padding and ~13 bytes of index).
//
// The shard count is chosen so that a ring holds several items of the
// largest size (-I), even with a small -m: -m 64 with -I 1m gives 16 rings
// of 4 MiB. A ring is the unit of memory: the sum of the rings is exactly
// -m, and nothing else holds item bytes.
//
// # Meta protocol state
//
// The meta commands need per-item state beyond value and flags: whether the
// item was read before (h), when it was last accessed (l), whether it was
// invalidated (stale, X), whether a client already holds its recache token
// (W/Z), and whether its key arrived base64-encoded. These are bits of the
// record header and its access time, so they cost no memory per item and no
// pointers. Meta commands apply their flags in the client's order under the
// shard lock through an Item handle (item.go) rather than through one store
// method per flag combination.
//
// # Replacement and eviction
//
// Overwriting, deleting or expiring an item marks its record dead; the bytes
// are reused when the ring's tail passes them. When the head needs room, the
// record at the tail is dropped if dead, reclaimed if expired or flushed, and
// otherwise evicted. Eviction is FIFO with a second chance (CLOCK): an item
// read since it was written or last spared is moved to the head instead,
// which approximates LRU per shard without any per-item list. While live
// items fill less than 3/4 of the ring (the rest being records made dead by
// overwrites and deletes), unread items at the tail are moved too, so the
// ring compacts instead of evicting when it is not really full. One store
// moves at most 64 items, bounding its time under the lock. With
// DisableEvictions (-M) live items are always moved, never evicted, and a
// store that would take a ring's live items past 15/16 of it fails with
// OutOfMemory (the slack bounds the copying compaction does).
//
// # Time
//
// Exptimes follow memcached (0 never, up to 30 days relative, larger absolute,
// negative already expired) and are kept as absolute unix seconds. Expired
// items are found lazily on access and by a background reclaimer that sweeps
// index slots a bounded batch at a time, skipping shards with nothing that can
// expire and items touched in the current second (so a get right after a set
// of an already expired item counts get_expired, as in memcached). flush_all is lazy, as in memcached: it sets oldest_live (and, with
// CAS on, oldest_cas, which makes it exact within a second), and items it
// invalidates stay in place until a lookup meets them (get_flushed), the
// ring's tail passes them, or the reclaimer sweeps them a little later
// (flush.go).
//
// # Memory limit and mapping
//
// SetMemoryLimit (memcached's cache_memlimit) replaces each ring with one of
// the new size under its shard's lock, copying live records oldest first
// and evicting the oldest when shrinking (memlimit.go). With Config.Mmap the
// rings are anonymous mappings outside the Go heap, 2 MiB aligned for
// transparent huge pages; Config.LargePages (-L) also prefaults them and
// fixes the limit, as memcached's preallocation does (ring.go).
//
// # Records across lock releases
//
// A large value is sent and received over many turns of its connection, so
// the protocol needs to name a record without holding a slice into a ring
// the shard lock no longer protects (the ring may be replaced and unmapped,
// the record moved or dropped). Each shard counts the bytes its head and
// tail have passed (vhead, vtail; wraps count the bytes they skip) and a
// ring generation. A ValueRef (Store.RefOf inside a Get callback, or
// Item.Ref) is the record's
// offset, the virtual position at which it was written and the generation;
// CopyValue copies part of its value under the lock if the head has not
// come back over those bytes since, else refuses (Stats.RefsLost). A
// Reservation (Reserve, FillReserved, CommitReserved) is a record written
// dead and outside the index for a value still arriving: invisible to
// lookups, dumps, statistics and walkers, dropped when the tail passes it
// (then lost, Stats.ReservationsLost), and linked where it lies on commit
// (append and prepend combine into a new record). cursor.go, reserve.go.
//
// # Iteration
//
// Dump walks the live items a bounded batch of index slots per lock hold,
// for lru_crawler metadump and stats cachedump (dump.go); SetEvictionHook
// reports evictions for `watch evictions`.
//
// # Statistics
//
// Counters live in each shard under its lock and are summed on demand. Size
// classes (memcached's 96-byte chunks growing by 1.25, or by -f from -n)
// exist only to report
// `stats slabs` and `stats items` the way memcached tools expect; all sizes
// share a ring. mem_requested is memcached's own item size (ITEM_ntotal),
// and hash_power_level grows by memcached's rule from the item count
// (hashpower.go).
package store
