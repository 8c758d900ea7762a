package store

// One page move's walk over its page, memcached 1.6.45's
// slab_rebalance_move: chunk by chunk, the class locked for the walk.

// moveStatus is what the walk found at a chunk (memcached's enum
// move_status); stats show the last busy one's name.
type moveStatus uint8

const (
	moveNone moveStatus = iota
	movePass
	moveFromSlab
	moveFromLRU
	moveBusy
	moveBusyUploading
	moveBusyActive
	moveBusyFloating
	moveLocked
)

var moveStatusNames = [...]string{"none", "pass", "from_slab", "from_lru", "busy", "busy_uploading", "busy_active", "busy_floating", "locked"}

func (m moveStatus) String() string { return moveStatusNames[m] }

// moverMaxLoops is memcached's SLAB_MOVE_MAX_LOOPS: after that many busy
// walks the mover may take a new page or evict to find room, and deletes
// a chained item a reader keeps pinned.
var moverMaxLoops = 5000

// pageMove is one move's progress (memcached's struct slab_rebalance).
type pageMove struct {
	c          *slabClass
	page       int
	start, end uint64
	done       []bool // chunks free for good: off the free list, never cut, or emptied
	spare      uint64 // a free chunk of c outside the page for the next rescue (memcached's new_it); nilLoc
	allowEvict bool
	loops      int // busy walks so far
	now        uint32

	rescues, chunkRescues, inlineReclaim, busyNomem, busyDeletes uint64
}

// startMove sets up the move of class c's oldest page; nil when c has
// fewer than two pages. As memcached's, it may evict when asked to
// (`slabs reassign`), or when the pool is empty and memory is full.
func (s *Store) startMove(c *slabClass, evict bool) *pageMove {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pageList) < 2 {
		return nil
	}
	p := int(c.pageList[0])
	mv := &pageMove{c: c, page: p, done: make([]bool, c.perPage), spare: nilLoc, allowEvict: evict}
	mv.start = uint64(p) * pageSize
	mv.end = mv.start + uint64(c.perPage*c.size)
	if _, pool := s.slabs.arena.usage(); pool == 0 && s.slabs.arena.full() {
		mv.allowEvict = true
	}
	if c.carveLeft > 0 && c.carve >= mv.start && c.carve < mv.end {
		// The page's uncut chunks go with it.
		for pos := c.carve; pos < mv.end; pos += uint64(c.size) {
			mv.done[mv.index(pos)] = true
		}
		c.carveLeft = 0
	}
	return mv
}

func (mv *pageMove) index(pos uint64) int { return int((pos - mv.start) / uint64(mv.c.size)) }

func (mv *pageMove) inPage(pos uint64) bool { return pos >= mv.start && pos < mv.end }

// walkPage is one walk over the page (c locked). The chunks are visited
// from the page's end: memcached cuts a new page into a free list that
// hands its last chunk out first, so its walk, from the page's start,
// meets the page's newest items first while the evictions it makes room
// with take the oldest; this store cuts pages from the start. It returns
// how many chunks were busy when visited (memcached's busy_items), how
// many are not free yet, and the status of the last chunk visited.
func (s *Store) walkPage(mv *pageMove) (busy, left int, last moveStatus) {
	mv.now = clampTime(s.Now())
	s.sweepFree(mv)
	for i := mv.c.perPage - 1; i >= 0; i-- {
		if mv.done[i] {
			continue
		}
		s.prepSpare(mv)
		last = s.moveChunk(mv, i)
		if last >= moveBusy || last == moveFromLRU && !mv.done[i] {
			busy++
		}
	}
	s.sweepFree(mv)
	for _, d := range mv.done {
		if !d {
			left++
		}
	}
	return busy, left, last
}

// sweepFree takes the page's chunks off c's free list (memcached's
// MOVE_FROM_SLAB). The list is walked only when a chunk of the page not
// emptied yet is on it (marked free): a move stuck on a pinned item walks
// its page every few milliseconds, and a class's free list may be long.
func (s *Store) sweepFree(mv *pageMove) {
	sl, c := s.slabs, mv.c
	onList := false
	for i, d := range mv.done {
		if !d && sl.rec(mv.start+uint64(i*c.size)).queue() == queueFree {
			onList = true
			break
		}
	}
	if !onList {
		return
	}
	prev := nilLoc
	for pos := c.free; pos != nilLoc; {
		next := sl.rec(pos).next()
		if mv.inPage(pos) {
			if prev == nilLoc {
				c.free = next
			} else {
				sl.rec(prev).setNext(next)
			}
			c.nfree--
			mv.done[mv.index(pos)] = true
		} else {
			prev = pos
		}
		pos = next
	}
}

// moveChunk acts on chunk i of the page and says what it found there.
func (s *Store) moveChunk(mv *pageMove, i int) moveStatus {
	sl := s.slabs
	pos := mv.start + uint64(i*mv.c.size)
	r := sl.rec(pos)
	headPos, link := pos, false
	switch q := r.queue(); {
	case q == queueFree:
		return moveFromSlab // freed during this walk: the sweep takes it
	case q == queueChunk:
		headPos, link = r.prev(), true
		if sl.rec(headPos).queue() >= numQueues {
			return moveBusyFloating // its item is being written, or unlinked and pinned
		}
	case q >= numQueues:
		return moveBusyFloating // being written, reserved, or unlinked and pinned
	}
	head := sl.rec(headPos)
	if s.debugLocked(head.key()) {
		return moveLocked
	}
	sh := s.shardOf(head)
	if !sh.mu.TryLock() {
		return moveLocked
	}
	defer sh.mu.Unlock()
	slot := sh.slotOfRecord(int(headPos))
	if slot < 0 {
		return moveBusy // (cannot happen: queued records are indexed)
	}
	chained := link || sl.chained(head)
	active := sh.pinned(int(headPos))
	status := moveFromLRU
	if active {
		status = moveBusyActive
	}
	switch {
	case head.expired(mv.now) || sh.flushed(head, mv.now):
		sh.unlinkHeld(slot, mv.c) // (a pinned chunk stays until its readers let go)
		if !chained && !active {
			mv.takeFreed(sl, pos)
		}
	case mv.spare == nilLoc:
		mv.busyNomem++
	case active && chained:
		// Only a plain item can be copied from under its readers: a
		// chain that stays pinned too long is deleted.
		if mv.loops > moverMaxLoops {
			sh.unlinkHeld(slot, mv.c)
			mv.busyDeletes++
		}
	case link:
		s.moveLink(mv.c, head, pos, mv.spare)
		mv.spare = nilLoc
		mv.chunkRescues++
		mv.done[i] = true
	default:
		s.rescue(mv, sh, slot, pos, active)
	}
	return status
}

// takeFreed takes the chunk at pos, just freed onto the head of the free
// list, back off it as emptied.
func (mv *pageMove) takeFreed(sl *slabs, pos uint64) {
	c := mv.c
	if c.free == pos {
		c.free = sl.rec(pos).next()
		c.nfree--
		mv.done[mv.index(pos)] = true
	}
}

// rescue copies the linked item at pos (a plain item or a chain's head;
// slot its index slot in sh, locked) to the spare chunk, where its index
// entry and queue place now point. An item readers pin (active) keeps its
// old chunk, unlinked, until they let go; else the chunk is emptied.
func (s *Store) rescue(mv *pageMove, sh *shard, slot int, pos uint64, active bool) {
	sl, c := s.slabs, mv.c
	r := sl.rec(pos)
	to := mv.spare
	mv.spare = nilLoc
	nr := sl.rec(to)
	n := min(r.size(), c.size) // (a chain's head: its chunk; the links stay)
	copy(nr[:n], r[:n])
	q := r.queue()
	sl.remove(c, pos)
	nr.setAccessed(mv.now) // (the CAS came with the copy)
	sl.push(c, q, to)
	if sl.chained(nr) {
		for link := sl.firstLink(nr); link != nilLoc; link = sl.rec(link).next() {
			sl.rec(link).setPrev(to)
		}
	}
	sh.idx.setLoc(slot, to>>3)
	sh.idx.epoch++
	if sl.chained(nr) {
		// memcached keeps a chained item's header in a small class of
		// its own, so the largest class's pages hold only chunks, whose
		// moves it counts as chunk rescues; here the head is the first
		// chunk too, and counts as one.
		mv.chunkRescues++
	} else {
		mv.rescues++
	}
	if active {
		sh.orphan(int(pos))
		r.setBits(recDead)
		r[offQueue] = queueNone
		return
	}
	r[offBits], r[offQueue] = recDead, queueFree
	mv.done[mv.index(pos)] = true
}

// moveLink copies the link at pos of the chain whose head is head to the
// free chunk to, and points its predecessor there. c is locked.
func (s *Store) moveLink(c *slabClass, head rec, pos, to uint64) {
	sl := s.slabs
	copy(sl.rec(to)[:c.size], sl.rec(pos)[:c.size])
	if first := sl.firstLink(head); first == pos {
		le.PutUint64(head[recHeader+head.klen():], to)
	} else {
		for link := first; link != nilLoc; link = sl.rec(link).next() {
			if sl.rec(link).next() == pos {
				sl.rec(link).setNext(to)
				break
			}
		}
	}
	r := sl.rec(pos)
	r[offBits], r[offQueue] = recDead, queueFree
}
