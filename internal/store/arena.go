package store

import (
	"fmt"
	"sync"
)

// The arena is all item memory: one reserved region cut into 1 MiB pages,
// which slab classes take one at a time (slab.go), as memcached's slab
// allocator takes its pages. A page is malloced (memcached's
// mem_malloced, total_malloced) from the region's front, or from the pages
// given back to the kernel before; pages no class owns (moved out by the
// page mover) wait in the global page pool, still
// malloced, and are taken first.
//
// memcached's limit rule (do_slabs_newslab): a class gets a page from the
// pool whatever the limit; a new page only while malloced pages stay
// within -m, or when the class has none yet, so every class can store
// something even after others took the whole limit. So the region
// reserves -m plus one page per class. Pool pages beyond the limit go
// back to the kernel when the limit is lowered or the mover fills the
// pool (memcached's memory_release).
type arena struct {
	mem    []byte // the reserved region; page p is mem[p*pageSize:]
	mapped bool   // mem is a mapping of its own (arena_linux.go), not a memory file's

	mu         sync.Mutex
	limitPages int     // -m in pages (cache_memlimit changes it)
	front      int     // pages cut from the region's front so far
	malloced   int     // pages malloced: owned by classes or in the pool
	pool       []int32 // the global page pool (memcached's class 0), LIFO
	released   []int32 // pages given back to the kernel, malloced again first
	// owner is each page's class (0: not owned). Only a memory file's
	// save and restore read it.
	owner []uint8
}

// maxArena is the most item memory the index can address (arena offsets
// are kept divided by 8 in locBits bits).
const maxArena = int64(locMask+1) * 8

// arenaSlack is what the region reserves beyond -m: a page for each class
// that may take its first page past the limit, and rounding.
const arenaSlack = (maxClasses + 2) * pageSize

// newArena reserves a region for limit bytes of pages (rounded down to
// whole pages, at least one) and room to grow to reserve bytes: a mapping
// of its own, or file (a memory file's mapping, which is then sized for
// limit only).
func newArena(limit, reserve int64, file []byte, mapped, populate bool) (*arena, error) {
	a := &arena{limitPages: limitPages(limit)}
	size := max(reserve, int64(a.limitPages)*pageSize+arenaSlack)
	if size > maxArena {
		return nil, fmt.Errorf("store: %d bytes of item memory pass the %d bytes the index can address", size, maxArena)
	}
	var err error
	switch {
	case file != nil:
		if need := int64(a.limitPages) * pageSize; int64(len(file)) < need {
			return nil, fmt.Errorf("store: memory file of %d bytes, %d needed", len(file), need)
		}
		a.mem = file[:len(file)/pageSize*pageSize]
	case mapped:
		a.mem, err = mapArena(int(size), int(int64(a.limitPages)*pageSize), populate)
		a.mapped = err == nil
	default:
		a.mem = make([]byte, size)
	}
	if err != nil {
		return nil, err
	}
	a.owner = make([]uint8, a.pages())
	return a, nil
}

// limitPages turns a byte limit into whole pages, at least one.
func limitPages(limit int64) int { return int(max(limit/pageSize, 1)) }

// pages is the number of pages the region can hold.
func (a *arena) pages() int { return len(a.mem) / pageSize }

// page returns page p's bytes.
func (a *arena) page(p int) []byte { return a.mem[p*pageSize : (p+1)*pageSize] }

// grant gives class a page: from the pool, else a newly malloced one
// while within the limit or when the class has none (first). The pool's
// last keep pages are left to other classes, unless class has none yet.
// It returns -1 when there is none to give.
func (a *arena) grant(class int, first bool, keep int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := -1
	switch n, r := len(a.pool), len(a.released); {
	case n > keep || n > 0 && first:
		p = int(a.pool[n-1])
		a.pool = a.pool[:n-1]
	case !first && a.malloced >= a.limitPages:
	case r > 0:
		p = int(a.released[r-1])
		a.released = a.released[:r-1]
		a.malloced++
	case a.front < a.pages():
		p = a.front
		a.front++
		a.malloced++
	}
	if p >= 0 {
		a.owner[p] = uint8(class)
	}
	return p
}

// prefill mallocs every page the limit allows into the pool, as memcached
// does at start with extstore (slabs_prefill_global, for its page mover):
// the pool holds all of -m not yet owned, total_malloced is the limit, and
// `slabs reassign 0 N` can hand any of it to a class. A mapped page costs
// nothing until a class writes it.
func (a *arena) prefill() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.malloced < a.limitPages {
		p := -1
		switch r := len(a.released); {
		case r > 0:
			p = int(a.released[r-1])
			a.released = a.released[:r-1]
		case a.front < a.pages():
			p = a.front
			a.front++
		default:
			return
		}
		a.malloced++
		a.pool = append(a.pool, int32(p))
	}
}

// setOwner records page p as class's.
func (a *arena) setOwner(p, class int) {
	a.mu.Lock()
	a.owner[p] = uint8(class)
	a.mu.Unlock()
}

// takePooled takes a page from the pool (for the mover), or -1.
func (a *arena) takePooled() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.pool)
	if n == 0 {
		return -1
	}
	p := int(a.pool[n-1])
	a.pool = a.pool[:n-1]
	return p
}

// giveBack puts n pages from p on into the pool.
func (a *arena) giveBack(p, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range n {
		a.pool = append(a.pool, int32(p+i))
		a.owner[p+i] = 0
	}
}

// setLimit changes the limit (cache_memlimit) and gives pool pages beyond
// it back. Pages classes own beyond it stay until the mover takes them.
func (a *arena) setLimit(limit int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.limitPages = min(limitPages(limit), a.pages())
	a.releaseLocked()
}

// releaseOver gives pool pages back to the kernel while more pages are
// malloced than the limit allows (memcached's memory_release).
func (a *arena) releaseOver() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releaseLocked()
}

func (a *arena) releaseLocked() {
	for a.malloced > a.limitPages && len(a.pool) > 0 {
		p := a.pool[len(a.pool)-1]
		a.pool = a.pool[:len(a.pool)-1]
		if a.mapped {
			dropPage(a.page(int(p)))
		}
		a.released = append(a.released, p)
		a.malloced--
	}
}

// usage reports the pages malloced (memcached's total_malloced in pages)
// and those in the global page pool.
func (a *arena) usage() (malloced, pool int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.malloced, len(a.pool)
}

// exhaustedFor reports whether no page is left to grant a class that
// leaves the pool's last keep pages to others: the pool holds no more than
// those and the limit is reached.
func (a *arena) exhaustedFor(keep int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pool) <= keep && a.malloced >= a.limitPages
}

// limit is the limit in pages.
func (a *arena) limit() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limitPages
}

// poolPages is how many pages the pool holds.
func (a *arena) poolPages() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pool)
}

// release unmaps the region; the arena is unusable after.
func (a *arena) release() {
	if a.mapped {
		unmapArena(a.mem)
	}
	a.mem = nil
}
