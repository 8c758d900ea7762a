package store

import (
	"fmt"
	"sync"
)

// The arena is all item memory: one reserved region cut into 1 MiB pages,
// which slab classes take one at a time (slab.go), as memcached's slab
// allocator takes its pages. Pages are granted from the region's front, so
// the kernel backs only the pages in use; a page given back (by the page
// mover, or by a large item going) waits in a pool that is taken from
// before the front.
//
// memcached's limit rule (do_slabs_newslab): a class gets a new page while
// the pages in use stay within -m, and always when it has none yet, so
// every class can store something even after others took the whole limit.
// So the region reserves -m plus one page per class.
type arena struct {
	mem    []byte // the reserved region; page p is mem[p*pageSize:]
	mapped bool   // mem is a mapping to unmap at the end (arena_linux.go)

	mu         sync.Mutex
	limitPages int     // -m in pages (cache_memlimit changes it)
	front      int     // pages granted from the front so far
	pool       []int32 // pages given back, reused first
	inUse      int     // pages held by classes and large items
	// owner is each page's class (0: not in use); a run's first page has
	// runHead set, the rest are runBody. Only a memory file's save and
	// restore read it.
	owner []uint8
}

// Page owners beyond a class id.
const (
	runHead = 0x80
	runBody = 0xff
)

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
	if maxArena := int64(locMask+1) * 8; size > maxArena {
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

// grant gives a class a page: from the pool, else from the front while
// within the limit or when the class has none (first). It returns -1 when
// there is none to give.
func (a *arena) grant(class int, first bool) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := -1
	switch n := len(a.pool); {
	case !first && a.inUse >= a.limitPages:
	case n > 0:
		p = int(a.pool[n-1])
		a.pool = a.pool[:n-1]
	case a.front < a.pages():
		p = a.front
		a.front++
	}
	if p >= 0 {
		a.inUse++
		a.owner[p] = uint8(class)
	}
	return p
}

// grantRun gives n consecutive pages for one large item, within the limit
// unless the class has none yet (first), from the pool when it holds such
// a run, else from the front. It returns
// the first page, or -1.
func (a *arena) grantRun(class, n int, first bool) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !first && a.inUse+n > a.limitPages {
		return -1
	}
	p := a.takePoolRun(n)
	if p < 0 {
		if a.front+n > a.pages() {
			return -1
		}
		p = a.front
		a.front += n
	}
	a.inUse += n
	a.owner[p] = runHead | uint8(class)
	for i := 1; i < n; i++ {
		a.owner[p+i] = runBody
	}
	return p
}

// takePoolRun removes n consecutive pages from the pool if it has them.
func (a *arena) takePoolRun(n int) int {
	if n == 1 && len(a.pool) > 0 {
		p := a.pool[len(a.pool)-1]
		a.pool = a.pool[:len(a.pool)-1]
		return int(p)
	}
	have := make(map[int32]bool, len(a.pool))
	for _, p := range a.pool {
		have[p] = true
	}
	for _, p := range a.pool {
		if have[p-1] {
			continue // not the start of a run
		}
		k := int32(1)
		for k < int32(n) && have[p+k] {
			k++
		}
		if k == int32(n) {
			kept := a.pool[:0]
			for _, q := range a.pool {
				if q < p || q >= p+k {
					kept = append(kept, q)
				}
			}
			a.pool = kept
			return int(p)
		}
	}
	return -1
}

// giveBack returns n pages from p on to the pool.
func (a *arena) giveBack(p, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range n {
		a.pool = append(a.pool, int32(p+i))
		a.owner[p+i] = 0
	}
	a.inUse -= n
}

// setLimit changes the limit (cache_memlimit). Pages in use beyond it stay
// until they are given back; no class gets more meanwhile.
func (a *arena) setLimit(limit int64) {
	a.mu.Lock()
	a.limitPages = min(limitPages(limit), a.pages())
	a.mu.Unlock()
}

// usage reports the pages granted from the front (memcached's
// total_malloced, in pages: memory the process took for items) and the
// pages in use now.
func (a *arena) usage() (malloced, inUse int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.front, a.inUse
}

// release unmaps the region; the arena is unusable after.
func (a *arena) release() {
	if a.mapped {
		unmapArena(a.mem)
	}
	a.mem = nil
}
