package integration

// tsuiteExcluded is the t/*.t files of memcached 1.6.18 that are not run,
// each with the reason: a feature gocached documents it does not have, or a
// file that does not test the server. Files that skip themselves still run:
// their skip is upstream's (refhang, slabhang, issue_140, issue_260; and
// proxy.t and misbehave.t, whose features Debian's memcached is built
// without too, so both servers skip them alike).
var tsuiteExcluded = map[string]string{
	"binary-extstore.t":        "extstore (ext_path): gocached has no flash tier",
	"chunked-extstore.t":       "extstore (ext_path): gocached has no flash tier",
	"error-extstore.t":         "extstore (ext_path): gocached has no flash tier",
	"extstore-buckets.t":       "extstore (ext_path): gocached has no flash tier",
	"extstore-jbod.t":          "extstore (ext_path): gocached has no flash tier",
	"extstore.t":               "extstore (ext_path): gocached has no flash tier",
	"whitespace.t":             "checks the formatting of memcached's own sources in a git checkout, not the server",
	"conn-limits.t":            "-o read_buf_mem_limit's out-of-memory on response buffers: gocached has no such pool (the option is accepted, no effect)",
	"slabs-reassign2.t":        "the slab page mover (slab_reassign, automove, global page pool, total_malloced): gocached has no slab pages",
	"slabs-reassign-chunked.t": "the slab page mover with chunked items: gocached has no slab pages",
}

// Owners of the fixes named in tsuiteKnown.
const (
	ownProtocol = "internal/protocol"
	ownStore    = "internal/store"
	ownReactor  = "internal/reactor"
	ownServer   = "cmd/gocached/server.go"
	// ownNone: a memcached mechanism gocached documents it does not have,
	// or a memcached-debug-only hook; nothing to fix.
	ownNone = "none (documented difference)"
)

// tsuiteKnown is the ratchet of failing assertions (see TestMemcachedTSuite).
var tsuiteKnown = []tsuiteKnownFailure{
	{file: "dyn-maxbytes.t", tests: "41", owner: ownStore,
		why: "test 41 (before any cache_memlimit) is issue_22.t's first check: with -m 3, memcached keeps 66560-byte values in 82792-byte chunks, 12 to a 1 MB page, 3 pages: 36 fit and 4 of the first 40 sets evict; gocached charges each such item its 66600 ring bytes, 47 fit, and none of the 40 evicts. Needs memory charged in class chunks within per-class 1 MB pages (memcached's slab allocator), a different memory model for the store"},
	{file: "issue_14.t", tests: "21", owner: ownStore,
		why: "total_malloced: memcached counts whole 1 MB pages per class and 10 new items (new keys) reuse the chunks of 10 expired ones in the same page (1048576 both times); gocached counts the bytes its rings have ever written, and a ring writes only at its head, never into an expired record's hole until it wraps, so the 10 new items add their own 666000 bytes (666000, then 1332000). Reusing holes in place needs a free-chunk (slab) allocator, a different memory model for the store"},
	{file: "issue_22.t", tests: "41,84", owner: ownStore,
		why: "-m 3 with 66560-byte values: memcached fits 36 (12 chunks of 82792 bytes per 1 MB page, 3 pages), so the first 40 sets evict 4 and, after stats reset, the next 40 evict exactly 40 from class 31; gocached charges 66600 ring bytes per item and fits 47: 0, then 33 evictions. Same cause as dyn-maxbytes.t 41 (no chunk rounding, no per-class pages)"},
	{file: "lru-maintainer.t", tests: "44,47,224", owner: ownNone,
		why: "memcached's segmented LRU's HOT, WARM and COLD queues (moves_to_cold, moves_to_warm, number_hot): gocached's store is CLOCK per shard, with no queues to move items between; its TEMP LRU (temporary_ttl) is there and passes"},
	{file: "lru.t", tests: "107,108,123,133,138-140,146,147,151,152", incomplete: true, owner: ownStore,
		why: "default -m 64 with 1 MB-250 values: memcached stores each as two 512 KB chunks in its 64 1 MB pages, so 64 survive and 37 are evicted, oldest first across the class; gocached's 16 rings of 4 MiB hold 60 and evict oldest first per ring, so 41 go and the survivors are scattered (item_14 survives, item_32 does not), after which the file's plan does not hold. Needs one LRU order across shards per class, a different memory model for the store"},
	{file: "slabs_reassign.t", tests: "123,125-129", owner: ownNone,
		why: "slab page reassignment (slabs reassign moves pages, evicted per class): gocached has no slab pages"},
}
