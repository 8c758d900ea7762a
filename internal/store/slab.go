package store

import (
	"sync"

	"github.com/gocached/gocached/internal/extstore"
)

// Slab classes: memcached's slab allocator over the arena's pages.
//
// Each class cuts the pages it is granted into chunks of its size; an item
// takes one chunk of the smallest class that holds memcached's size of it
// (ITEM_ntotal), so the same items fill the same classes, and the same
// number fit in a page, as in memcached. A freed chunk (delete, expiry,
// replacement, eviction) goes on its class's free list and the next
// allocation in the class takes it, before any new page. When the class
// has no free chunk and the arena no page for it, the allocation evicts
// from the class's LRU (lru.go).
//
// An item larger than the largest class's chunk (memcached's
// slab_chunk_max) is a chain of that class's chunks (chain.go), as in
// memcached, all in the one class, so that one lock covers all of it.
//
// Locks: a class's lock guards its free list, its queues and the queue
// links of its records; it is taken after a shard's lock, never before.

// nilLoc marks the end of a free list or queue.
const nilLoc = ^uint64(0)

type slabClass struct {
	mu      sync.Mutex
	id      int
	size    int // chunk size
	perPage int
	largest bool // the class chained items take their chunks from
	pages   int  // pages held
	free    uint64
	nfree   int
	// carve is the next chunk not yet handed out of the newest page, and
	// carveLeft how many remain there: a page is cut as it is used, so the
	// kernel backs its memory only as items arrive.
	carve     uint64
	carveLeft int
	q         [numQueues]lruQueue
	pageList  []int32 // the class's pages in the order it got them (the mover's oldest first)
	// memcached's per-class LRU counters (moves_to_cold, ...; lru.go).
	movesToCold, movesToWarm, movesWithinLRU, directReclaims uint64

	_ [64]byte // keep neighbouring classes' locks off one cache line
}

// slabs is the store's item memory: the arena and its classes.
type slabs struct {
	arena   *arena
	classes []slabClass      // by class id; 0 unused
	noCAS   bool             // -C: memcached's item sizes lack the CAS
	ext     *extstore.Engine // flash items' values (flash.go); nil without
	reserve poolReserve      // pool pages kept for flash headers (poolreserve.go)
}

func newSlabs(a *arena, sizes []int) *slabs {
	sl := &slabs{arena: a, classes: make([]slabClass, len(sizes))}
	for id := 1; id < len(sizes); id++ {
		c := &sl.classes[id]
		c.id, c.size = id, sizes[id]
		c.perPage = max(1, pageSize/c.size)
		c.largest = id == len(sizes)-1
		c.free = nilLoc
		for i := range c.q {
			c.q[i] = lruQueue{head: nilLoc, tail: nilLoc}
		}
	}
	return sl
}

func (sl *slabs) rec(pos uint64) rec { return rec(sl.arena.mem[pos:]) }

// largest is the class chained items take their chunks from.
func (sl *slabs) largest() *slabClass { return &sl.classes[len(sl.classes)-1] }

// takeChunk returns a free chunk of c, or nilLoc when there is none and
// no page to cut one from. c is locked.
func (sl *slabs) takeChunk(c *slabClass) uint64 {
	if c.free != nilLoc {
		pos := c.free
		r := sl.rec(pos)
		c.free = r.next()
		c.nfree--
		r[offQueue] = queueNone
		return pos
	}
	if c.carveLeft == 0 {
		p := sl.arena.grant(c.id, c.pages == 0, sl.reserve.keepFor(c.id))
		if p < 0 {
			return nilLoc
		}
		c.pages++
		c.pageList = append(c.pageList, int32(p))
		c.carve, c.carveLeft = uint64(p)*pageSize, c.perPage
	}
	pos := c.carve
	c.carve += uint64(c.size)
	c.carveLeft--
	sl.rec(pos)[offQueue] = queueNone
	return pos
}

// freeChunk gives back the chunk of the record at pos, which is in no
// queue, and the rest of its chain if it has one. c is locked.
func (sl *slabs) freeChunk(c *slabClass, pos uint64) {
	if r := sl.rec(pos); sl.chained(r) {
		sl.freeLinks(c, r)
	} else if r.flash() {
		sl.flashGone(r)
	}
	sl.pushFree(c, pos)
}

// pushFree puts the chunk at pos on c's free list. c is locked.
func (sl *slabs) pushFree(c *slabClass, pos uint64) {
	r := sl.rec(pos)
	r[offBits] = recDead
	r[offQueue] = queueFree
	r[offClass] &^= recFlash | recCASChosen
	r.setNext(c.free)
	c.free = pos
	c.nfree++
}

// freeChunks is how many chunks of c hold no item: memcached's
// free_chunks.
func (c *slabClass) freeChunks() int { return c.nfree + c.carveLeft }
