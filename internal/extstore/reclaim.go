package extstore

import "math"

// Delete notes that the record at loc is gone (its item was deleted,
// replaced or evicted from RAM), so its page holds fewer live bytes. A page
// left with no live record is freed at once unless it is being written. A
// loc whose page was reclaimed since is ignored; Delete reports whether it
// counted.
func (e *Engine) Delete(loc Location) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.pageAt(loc)
	if p == nil {
		return false
	}
	n := uint64(loc.Len)
	p.bytesUsed -= min(n, p.bytesUsed)
	p.objects -= min(1, p.objects)
	e.counters.bytesUsed -= min(n, e.counters.bytesUsed)
	e.counters.objectsUsed -= min(1, e.counters.objectsUsed)
	e.maybeFree(p)
	return true
}

// Undelete takes back a Delete of loc that its caller could not follow
// through (a compactor's rescue that found no write buffer), so the page
// counts the record live again. It reports false, and counts nothing,
// when the Delete freed the page or it was reclaimed since.
func (e *Engine) Undelete(loc Location) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.pageAt(loc)
	if p == nil {
		return false
	}
	n := uint64(loc.Len)
	p.bytesUsed += n
	p.objects++
	e.counters.bytesUsed += n
	e.counters.objectsUsed++
	return true
}

// Check reports whether loc's page still holds the version loc was written
// to: false means a read would miss.
func (e *Engine) Check(loc Location) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pageAt(loc) != nil
}

// pageAt is loc's page while it is live at loc's version. Called with e.mu
// held.
func (e *Engine) pageAt(loc Location) *page {
	if int(loc.Page) >= len(e.pages) {
		return nil
	}
	p := &e.pages[loc.Page]
	if p.free || p.closed || p.version != loc.Version {
		return nil
	}
	return p
}

// ClosePage reclaims a page a compactor has emptied (it rescued the
// records it wanted). Pages being written are left alone.
func (e *Engine) ClosePage(id uint16, version uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.pageAt(Location{Page: id, Version: version}); p != nil && !p.active {
		e.closePage(p, false)
		e.maybeFree(p)
	}
}

// EvictPage reclaims a page with its live records, counting them evicted.
func (e *Engine) EvictPage(id uint16, version uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.pageAt(Location{Page: id, Version: version}); p != nil && !p.active {
		e.closePage(p, true)
		e.maybeFree(p)
	}
}

// closePage makes every location of p a miss from now on; the page is
// freed once no read and no buffer write is left on it. Called with e.mu
// held.
func (e *Engine) closePage(p *page, evicted bool) {
	if p.closed {
		return
	}
	p.closed = true
	p.active = false
	if evicted {
		e.counters.pageEvictions++
		e.counters.objectsEvicted += p.objects
		e.counters.bytesEvicted += p.bytesUsed
	}
	if e.current[p.bucket] == p {
		e.current[p.bucket] = nil
	}
	// A buffer still taking records is not queued: give it back now.
	if w := p.openBuffer(); w != nil {
		p.wbufs = p.wbufs[:len(p.wbufs)-1]
		w.page = nil
		e.spare = append(e.spare, w)
	}
}

// maybeFree frees p when it is closed, or written and emptied by deletes,
// and nothing is in flight on it. Called with e.mu held.
func (e *Engine) maybeFree(p *page) {
	if p.free || p.refs > 0 || len(p.wbufs) > 0 {
		return
	}
	if p.closed || (p.objects == 0 && !p.active) {
		e.freePage(p)
	}
}

// freePage puts p back on its free list with version 0. Called with e.mu
// held.
func (e *Engine) freePage(p *page) {
	e.counters.objectsUsed -= min(p.objects, e.counters.objectsUsed)
	e.counters.bytesUsed -= min(p.bytesUsed, e.counters.bytesUsed)
	e.counters.pageReclaims++
	if e.current[p.bucket] == p {
		e.current[p.bucket] = nil
	}
	*p = page{file: p.file, base: p.base, id: p.id, freeBucket: p.freeBucket, free: true, wbufs: p.wbufs[:0]}
	e.freeList[p.freeBucket] = append(e.freeList[p.freeBucket], p)
	e.nfree++
}

// evictFor makes room when bucket b finds no free page, as memcached's
// write path does: the oldest page (lowest version) among those b may use
// is evicted. It reports whether a page is free now; false when none could
// be evicted or the evicted page still has reads in flight.
func (e *Engine) evictFor(b Bucket) bool {
	var oldest *page
	low := uint64(math.MaxUint64)
	for i := range e.pages {
		p := &e.pages[i]
		if p.freeBucket != BucketDefault && p.freeBucket != b {
			continue
		}
		if p.free {
			return true
		}
		if !p.active && !p.closed && p.version < low {
			oldest, low = p, p.version
		}
	}
	if oldest == nil {
		return false
	}
	e.closePage(oldest, true)
	e.maybeFree(oldest)
	return oldest.free
}
