package store

import (
	"slices"
	"sync"
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
// slab_chunk_max; only with -I above it) takes a run of whole consecutive
// pages instead, counted in the largest class, which memcached would store
// as a chain of that class's chunks. When the item goes, the class keeps
// the run for the next such item, as memcached's class keeps the chunks.
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
	// runs: every item of the class takes a run of whole pages (its chunk
	// is larger than a page: -I above slab_chunk_max without chunking).
	runs  bool
	pages int // pages held, runs included
	free  uint64
	nfree int
	// carve is the next chunk not yet handed out of the newest page, and
	// carveLeft how many remain there: a page is cut as it is used, so the
	// kernel backs its memory only as items arrive.
	carve     uint64
	carveLeft int
	// moving is 1 + the page the mover is emptying (0: none). Its chunks
	// leave the free list walk by walk; poolFreePages must not pool it
	// meanwhile, or the mover walks on over a page that is no longer the
	// class's: a page run's record "rescued" into a chunk too small for
	// it, or the page taken twice.
	moving   int32
	freeRuns []pageRun // page runs of items gone, kept by the class as memcached keeps a chained item's chunks
	q        [numQueues]lruQueue
	pageList []int32 // the class's pages in the order it got them, runs left out (the mover's oldest first)
	// memcached's per-class LRU counters (moves_to_cold, ...; lru.go).
	movesToCold, movesToWarm, movesWithinLRU, directReclaims uint64

	_ [64]byte // keep neighbouring classes' locks off one cache line
}

// slabs is the store's item memory: the arena and its classes.
type slabs struct {
	arena   *arena
	classes []slabClass // by class id; 0 unused
	noCAS   bool        // -C: memcached's item sizes lack the CAS
}

func newSlabs(a *arena, sizes []int) *slabs {
	sl := &slabs{arena: a, classes: make([]slabClass, len(sizes))}
	for id := 1; id < len(sizes); id++ {
		c := &sl.classes[id]
		c.id, c.size = id, sizes[id]
		c.perPage = max(1, pageSize/c.size)
		c.runs = c.size > pageSize
		c.free = nilLoc
		for i := range c.q {
			c.q[i] = lruQueue{head: nilLoc, tail: nilLoc}
		}
	}
	return sl
}

func (sl *slabs) rec(pos uint64) rec { return rec(sl.arena.mem[pos:]) }

// runPages is how many pages an item of size bytes takes in a run.
func runPages(size int) int { return (size + pageSize - 1) / pageSize }

// takeChunk returns a free chunk of c for a record of size bytes, or nilLoc
// when there is none and no page to cut one from. c is locked.
func (sl *slabs) takeChunk(c *slabClass, size int) uint64 {
	if size > c.size || c.runs {
		n := runPages(size)
		p := sl.takeFreeRun(c, n)
		if p < 0 {
			if p = sl.arena.grantRun(c.id, n, c.pages == 0); p < 0 {
				return nilLoc
			}
			c.pages += n
		}
		sl.rec(uint64(p) * pageSize)[offQueue] = queueNone
		return uint64(p) * pageSize
	}
	if c.free != nilLoc {
		pos := c.free
		r := sl.rec(pos)
		c.free = r.next()
		c.nfree--
		r[offQueue] = queueNone
		return pos
	}
	if c.carveLeft == 0 {
		p := sl.arena.grant(c.id, c.pages == 0)
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
// queue. c is locked.
func (sl *slabs) freeChunk(c *slabClass, pos uint64) {
	r := sl.rec(pos)
	if size := r.size(); size > c.size || c.runs {
		r.setBits(recDead)
		r[offQueue] = queueFree
		c.freeRuns = append(c.freeRuns, pageRun{page: int32(pos / pageSize), n: int32(runPages(size))})
		return
	}
	r.setBits(recDead)
	r[offQueue] = queueFree
	r.setNext(c.free)
	c.free = pos
	c.nfree++
}

// freeChunks is how many chunks of c hold no item: memcached's
// free_chunks (a free page run counts as a page's worth).
func (c *slabClass) freeChunks() int {
	n := c.nfree + c.carveLeft
	for _, r := range c.freeRuns {
		n += int(r.n) * c.perPage
	}
	return n
}

// pageRun is n consecutive pages from page on.
type pageRun struct{ page, n int32 }

// takeFreeRun takes n pages from c's free runs (locked): a run of just n
// (the common case: items of one size), else the first longer one, whose
// rest stays free; adjacent free runs are merged when none is long
// enough. It returns the first page, or -1.
func (sl *slabs) takeFreeRun(c *slabClass, n int) int {
	for merged := false; ; merged = true {
		best := -1
		for i, r := range c.freeRuns {
			if int(r.n) == n {
				best = i
				break
			}
			if int(r.n) > n && best < 0 {
				best = i
			}
		}
		if best >= 0 {
			r := c.freeRuns[best]
			c.freeRuns = append(c.freeRuns[:best], c.freeRuns[best+1:]...)
			if rest := int(r.n) - n; rest > 0 {
				sl.splitRun(c, int(r.page)+n, rest)
			}
			sl.arena.setRunOwner(int(r.page), n, c.id)
			return int(r.page)
		}
		if merged || len(c.freeRuns) < 2 {
			return -1
		}
		sl.mergeRuns(c)
	}
}

// splitRun makes n pages from p on a free run of c of their own: a dead
// record at its start says how long it is, for a memory file's restore.
func (sl *slabs) splitRun(c *slabClass, p, n int) {
	r := sl.rec(uint64(p) * pageSize)
	r.writeHeader(1, n*pageSize-recHeader-1, c.id, 0, 0, 0, 0)
	r.setBits(recDead)
	r[offQueue] = queueFree
	sl.arena.setRunOwner(p, n, c.id)
	c.freeRuns = append(c.freeRuns, pageRun{page: int32(p), n: int32(n)})
}

// mergeRuns joins c's adjacent free runs.
func (sl *slabs) mergeRuns(c *slabClass) {
	slices.SortFunc(c.freeRuns, func(a, b pageRun) int { return int(a.page - b.page) })
	runs := c.freeRuns
	c.freeRuns = nil
	for i := 0; i < len(runs); {
		j, n := i+1, int(runs[i].n)
		for j < len(runs) && int(runs[j].page) == int(runs[i].page)+n {
			n += int(runs[j].n)
			j++
		}
		if j == i+1 {
			c.freeRuns = append(c.freeRuns, runs[i])
		} else {
			sl.splitRun(c, int(runs[i].page), n)
		}
		i = j
	}
}

// poolFreePages gives the pages of c (locked) whose chunks are all free
// to the global pool, so that an item too large for a chunk, which takes
// whole pages, can have them: evicting the chunks of c's tail frees
// chunks, not pages. It returns how many pages went.
func (sl *slabs) poolFreePages(c *slabClass) int {
	if c.nfree < c.perPage || len(c.pageList) == 0 {
		return 0
	}
	freeIn := make(map[int32]int)
	for pos := c.free; pos != nilLoc; pos = sl.rec(pos).next() {
		freeIn[int32(pos/pageSize)]++
	}
	whole := make(map[int32]bool)
	for p, n := range freeIn {
		carving := c.carveLeft > 0 && int32(c.carve/pageSize) == p
		if n == c.perPage && !carving && c.moving != p+1 {
			whole[p] = true
		}
	}
	if len(whole) == 0 {
		return 0
	}
	prev := nilLoc
	for pos := c.free; pos != nilLoc; {
		next := sl.rec(pos).next()
		if whole[int32(pos/pageSize)] {
			if prev == nilLoc {
				c.free = next
			} else {
				sl.rec(prev).setNext(next)
			}
			c.nfree--
		} else {
			prev = pos
		}
		pos = next
	}
	kept := c.pageList[:0]
	for _, p := range c.pageList {
		if whole[p] {
			sl.arena.giveBack(int(p), 1)
			c.pages--
		} else {
			kept = append(kept, p)
		}
	}
	c.pageList = kept
	return len(whole)
}
