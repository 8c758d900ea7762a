package store

// Iteration over the items of a live store, for memcached's `lru_crawler
// metadump` and `stats cachedump`. Like memcached's crawler it is not a
// snapshot: the walk goes shard by shard through the index, a bounded batch
// of slots per lock hold, so stores go on meanwhile; an item stored, moved
// or deleted during the walk may be listed or not (an index that grows or
// shifts entries back on a delete may show one item twice or skip one), but
// an item untouched during the whole walk is listed exactly once.

// dumpBatch bounds the index slots examined per shard lock hold.
const dumpBatch = 1024

// DumpCursor is where a Dump stands; the zero value starts at the first
// shard. It holds no reference into the store.
type DumpCursor struct {
	shard int
	slot  int
}

// Done reports whether the walk has passed the last shard.
func (c *DumpCursor) Done(s *Store) bool { return c.shard >= len(s.shards) }

// Dump calls fn with each live (unexpired, unflushed) item from the cursor
// on, examining at most maxSlots index slots in all, and advances the
// cursor. When fn returns false the walk stops before that item, which the
// next Dump from the same cursor offers again. Dump returns true once every
// shard has been walked. fn runs with the item's shard locked: it must not
// call the store, and must not keep the Item or its Key.
func (s *Store) Dump(c *DumpCursor, maxSlots int, fn func(it Item) bool) bool {
	for maxSlots > 0 && c.shard < len(s.shards) {
		sh := &s.shards[c.shard]
		n := min(maxSlots, dumpBatch)
		maxSlots -= n
		sh.mu.Lock()
		stopped := sh.dump(s, c, n, fn)
		sh.mu.Unlock()
		if stopped {
			return false
		}
	}
	return c.shard >= len(s.shards)
}

// dump walks up to n slots of the shard from c.slot. It returns true when
// fn asked to stop; it moves c to the next shard at the table's end.
func (sh *shard) dump(s *Store, c *DumpCursor, n int, fn func(it Item) bool) bool {
	now := clampTime(s.Now())
	slots := sh.idx.slots
	i := c.slot
	for end := min(len(slots), i+n); i < end; i++ {
		e := slots[i]
		if e == 0 {
			continue
		}
		pos := int(entryLoc(e)) << 3
		r := sh.rec(pos)
		if r.expired(now) || sh.flushed(r, now) {
			continue
		}
		if !fn(Item{s: s, sh: sh, pos: pos, now: now}) {
			c.slot = i
			return true
		}
	}
	if i >= len(slots) {
		c.shard++
		c.slot = 0
	} else {
		c.slot = i
	}
	return false
}

// LastAccess returns when the item was last read or written, in unix
// seconds (memcached's `la` in metadump).
func (it Item) LastAccess() int64 { return int64(it.rec().accessed()) }
