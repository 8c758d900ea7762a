package store

import "unsafe"

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
//
// hashes[i] is keys[i]'s HashKey: the caller keeps them for the lookups.
func (s *Store) Prefetch(keys [][]byte, hashes []KeyHash) {
	if !prefetchSupported || len(keys) < 2 {
		return // one key has nothing to overlap with
	}
	keys = keys[:min(len(keys), len(hashes), prefetchBatch)]
	var probes [prefetchBatch]indexProbe
	for i, key := range keys {
		if probes[i] = s.probeFor(key, hashes[i]); probes[i].slot == nil {
			return
		}
	}
	s.prefetchProbes(probes[:len(keys)])
}

// prefetchBatch bounds the keys one call looks at: more than a core
// keeps misses in flight.
const prefetchBatch = 16

// indexProbe is where a key's lookup starts: its home slot, the slot after
// it (often on the same line, where a colliding key lands), its tag and
// where the key ends in its record. prefetchProbes sets found. The layout
// is prefetch_amd64.s's.
type indexProbe struct {
	slot, next *uint64
	tag        uint32
	keyEnd     uint32 // offset of the key's last byte in its record
	found      uint64 // the record's offset asked for, or noRecord
}

// noRecord is found when neither slot held the probe's tag.
const noRecord = ^uint64(0)

// probeFor finds the probe of key, whose hash is h, in its shard's
// published table; slot is nil when there is none.
func (s *Store) probeFor(key []byte, h KeyHash) indexProbe {
	tab := s.shards[uint64(h)&s.shardMask].idx.published.Load()
	if tab == nil {
		return indexProbe{}
	}
	slots := *tab
	mask := uint32(len(slots) - 1)
	tag := tagOf(uint64(h))
	return indexProbe{slot: &slots[tag&mask], next: &slots[(tag+1)&mask], tag: tag,
		keyEnd: uint32(recHeader + len(key) - 1)}
}

// prefetchProbes asks for every probe's index line, then reads the slots
// and asks for three lines of each record found: its first, the one its key
// ends in and the one after, where a value of up to a few dozen bytes lies
// whole and a larger one starts (the reply copies it next). One call for
// the batch, the loads of different probes independent.
func (s *Store) prefetchProbes(probes []indexProbe) {
	mem := s.slabs.arena.mem
	if len(probes) == 0 || len(mem) == 0 {
		return
	}
	prefetchProbes(&probes[0], len(probes), unsafe.Pointer(&mem[0]), uint64(len(mem)))
}
