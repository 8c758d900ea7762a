package store

// Room for the mover's rescues (memcached 1.6.45's slab_rebalance_prep):
// a free chunk of the page's class outside the page, kept as the move's
// spare until a rescue uses it.

// prepSpare finds a spare chunk for the next rescue when the move has
// none: a free one, else, once the move has been stuck for
// moverMaxLoops walks, a new page while memory is below the limit; and
// when the move may evict (`slabs reassign`, or memory full, pool empty,
// or stuck that long with memory full) up to ten evictions at the class's
// COLD tail (HOT's tail moved down when COLD gives nothing), as
// memcached's do_item_alloc_pull. mv.c is locked.
func (s *Store) prepSpare(mv *pageMove) {
	if mv.spare != nilLoc {
		return
	}
	if mv.spare = s.takeFreeOutside(mv); mv.spare != nilLoc {
		return
	}
	c := mv.c
	if !mv.allowEvict && mv.loops > moverMaxLoops {
		if s.slabs.arena.full() {
			mv.allowEvict = true
		} else if s.slabs.growClass(c) {
			mv.spare = s.takeFreeOutside(mv)
			return
		}
	}
	if !mv.allowEvict {
		return
	}
	for range allocTries {
		if s.pull(c, queueCold, nil, mv.now, true) == 0 && !s.hooks.lru.Load().Flat {
			s.pull(c, queueHot, nil, mv.now, false)
		}
		if mv.spare = s.takeFreeOutside(mv); mv.spare != nilLoc {
			return
		}
	}
}

// takeFreeOutside pops a free chunk of mv's class (locked) outside the
// page, or cuts one from the class's newest page, never taking a new page
// (memcached's NO_NEWPAGE); nilLoc when there is none. Free chunks of the
// page met at the list's head on the way are emptied already (memcached's
// inline reclaim).
func (s *Store) takeFreeOutside(mv *pageMove) uint64 {
	sl, c := s.slabs, mv.c
	for c.free != nilLoc {
		pos := c.free
		r := sl.rec(pos)
		c.free = r.next()
		c.nfree--
		if mv.inPage(pos) {
			mv.done[mv.index(pos)] = true
			mv.inlineReclaim++
			continue
		}
		r[offBits], r[offQueue] = recDead, queueNone
		return pos
	}
	if c.carveLeft > 0 {
		pos := c.carve
		c.carve += uint64(c.size)
		c.carveLeft--
		r := sl.rec(pos)
		r[offBits], r[offQueue] = recDead, queueNone
		return pos
	}
	return nilLoc
}

// growClass gives class c (locked) a new page to cut chunks from, within
// the limit; it reports whether there was one.
func (sl *slabs) growClass(c *slabClass) bool {
	if c.carveLeft > 0 {
		return true
	}
	p := sl.arena.grant(c.id, false, sl.reserve.keepFor(c.id))
	if p < 0 {
		return false
	}
	c.pages++
	c.pageList = append(c.pageList, int32(p))
	c.carve, c.carveLeft = uint64(p)*pageSize, c.perPage
	return true
}

// finishMove takes the emptied page from its class (locked) and gives
// back the spare chunk the move did not use.
func (s *Store) finishMove(mv *pageMove) {
	c := mv.c
	if mv.spare != nilLoc {
		s.slabs.pushFree(c, mv.spare)
		mv.spare = nilLoc
	}
	c.pageList = c.pageList[1:]
	c.pages--
}

// abandonMove ends a move before its page is empty (Close): the chunks
// it emptied, and its spare, go back on the class's free list (locked).
func (s *Store) abandonMove(mv *pageMove) {
	c := mv.c
	if mv.spare != nilLoc {
		s.slabs.pushFree(c, mv.spare)
		mv.spare = nilLoc
	}
	for i, d := range mv.done {
		if d {
			s.slabs.pushFree(c, mv.start+uint64(i*c.size))
		}
	}
}

// full reports whether the pages malloced reach the limit (memcached's
// mem_malloced >= mem_limit).
func (a *arena) full() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.malloced >= a.limitPages
}
