package store

import (
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// Prefetch is a hint that keys are about to be looked up, one after another,
// as the gets pipelined in one read are. It changes nothing a lookup returns.
//
// Each lookup's first reads, its index slot and then the record the slot
// points to, are cache misses at depth, and a get takes them in turn under
// its shard lock: nothing overlaps them. Prefetch starts the same misses
// for the whole batch at once, without locks: one pass asks for every
// key's index line, a second reads the slots and asks for the records
// they point to, so the loads of different keys are in flight together and
// the gets that follow find warm lines.
//
// Without the shard lock the slots may be rewritten or the table replaced
// (index.published, which keeps the old table alive while read) under it,
// and a slot may point at a record freed since: a stale answer costs only a
// useless prefetch. The slot reads and prefetches are in assembly
// (prefetch_amd64.s): a benign word-sized race the race detector cannot
// see, and prefetch instructions never fault, so an arena address is safe to
// give them whatever it holds. Elsewhere Prefetch does nothing.
func (s *Store) Prefetch(keys [][]byte) {
	if !prefetchSupported || len(keys) < 2 {
		return // one key has nothing to overlap with
	}
	keys = keys[:min(len(keys), prefetchBatch)]
	var probes [prefetchBatch]struct {
		slot, next *uint64
		tag        uint32
	}
	for i, key := range keys {
		h := xxhash.Sum64(key)
		tab := s.shards[h&s.shardMask].idx.published.Load()
		if tab == nil {
			return
		}
		slots := *tab
		mask := uint32(len(slots) - 1)
		tag := tagOf(h)
		p := &probes[i]
		p.slot, p.next, p.tag = &slots[tag&mask], &slots[(tag+1)&mask], tag
		prefetchLine(unsafe.Pointer(p.slot))
	}
	mem := s.slabs.arena.mem
	if len(mem) == 0 {
		return
	}
	for i, key := range keys {
		p := &probes[i]
		// The key ends in the record's second line or later: ask for both.
		prefetchRecord(p.slot, p.next, p.tag, unsafe.Pointer(&mem[0]), uint64(len(mem)), uint64(recHeader+len(key)-1))
	}
}

// prefetchBatch bounds the keys one call looks at: more than a core
// keeps misses in flight.
const prefetchBatch = 16
