package extstore

// Write appends rec to the current page of bucket b and returns where it
// lies. It only copies into a write buffer; a buffer that fills is handed
// to the writer goroutine. ErrBusy (every buffer is being written) and
// ErrFull (no page could be freed now) are transient: retry later, as
// memcached's storage thread does.
func (e *Engine) Write(b Bucket, rec Record) (Location, error) {
	n := uint64(rec.Size())
	if n > e.wbufSize || len(rec.Key) > maxKeyLen || uint64(len(rec.Value)) > e.wbufSize {
		return Location{}, ErrTooLarge
	}
	if b >= BucketCount {
		b = BucketDefault
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shut {
		return Location{}, ErrClosed
	}
	w, err := e.bufferFor(b, n)
	if err != nil {
		return Location{}, err
	}
	p := w.page
	loc := Location{Page: p.id, Version: p.version, Offset: uint32(w.offset) + uint32(w.used), Len: uint32(n)}
	rec.encode(w.buf[w.used : w.used+int(n)])
	w.used += int(n)
	p.objects++
	p.bytesUsed += n
	e.counters.objectsWritten++
	e.counters.bytesWritten += n
	e.counters.objectsUsed++
	e.counters.bytesUsed += n
	return loc, nil
}

// bufferFor finds a write buffer of bucket b with n bytes free, taking a
// new buffer or a new page as the old ones fill. Called with e.mu held.
func (e *Engine) bufferFor(b Bucket, n uint64) (*wbuf, error) {
	for tries := 0; tries < 3; tries++ {
		p := e.current[b]
		if p == nil || !p.active || p.closed {
			p = e.allocPage(b)
			if p == nil {
				if !e.evictFor(b) {
					return nil, ErrFull
				}
				continue
			}
		}
		if w := p.openBuffer(); w != nil {
			if uint64(len(w.buf)-w.used) >= n {
				return w, nil
			}
			e.submit(w)
		}
		if p.allocated >= e.pageSize {
			// Page fully handed out: the next try takes a new one.
			e.current[b] = nil
			continue
		}
		w := e.takeBuffer()
		if w == nil {
			return nil, ErrBusy
		}
		w.page, w.offset, w.used, w.full = p, p.allocated, 0, false
		p.allocated += e.wbufSize
		p.wbufs = append(p.wbufs, w)
		return w, nil
	}
	return nil, ErrFull
}

// openBuffer is the page's buffer still taking records, if any.
func (p *page) openBuffer() *wbuf {
	if len(p.wbufs) == 0 {
		return nil
	}
	if w := p.wbufs[len(p.wbufs)-1]; !w.full {
		return w
	}
	return nil
}

// allocPage takes a free page for bucket b: one reserved for b, else a
// default one. Called with e.mu held.
func (e *Engine) allocPage(b Bucket) *page {
	var p *page
	for _, fb := range [2]Bucket{b, BucketDefault} {
		if l := e.freeList[fb]; len(l) > 0 {
			p = l[len(l)-1]
			e.freeList[fb] = l[:len(l)-1]
			break
		}
	}
	if p == nil {
		return nil
	}
	p.free, p.closed, p.active = false, false, true
	p.version = e.version
	e.version++
	p.bucket = b
	e.nfree--
	e.current[b] = p
	e.counters.pageAllocs++
	return p
}

// takeBuffer pops a spare write buffer, allocating up to WbufCount of them
// on first use. Called with e.mu held.
func (e *Engine) takeBuffer() *wbuf {
	if l := len(e.spare); l > 0 {
		w := e.spare[l-1]
		e.spare = e.spare[:l-1]
		return w
	}
	if e.made < e.cfg.WbufCount {
		e.made++
		return &wbuf{buf: make([]byte, e.wbufSize)}
	}
	return nil
}

// submit closes w to records and queues it for the writer. The queue holds
// WbufCount buffers, as many as exist, so this never blocks. Called with
// e.mu held.
func (e *Engine) submit(w *wbuf) {
	w.full = true
	clear(w.buf[w.used:]) // a scan stops at the zeroed tail
	e.queued++
	e.flushes <- w
}

// writeLoop writes full buffers to their pages, one at a time so a page's
// buffers land in order and its written mark only grows.
func (e *Engine) writeLoop() {
	defer e.writer.Done()
	for w := range e.flushes {
		p := w.page
		_, err := p.file.WriteAt(w.buf, p.base+int64(w.offset))
		e.mu.Lock()
		p.wbufs = p.wbufs[1:]
		p.written = w.offset + e.wbufSize
		if err != nil {
			// The bytes are not on flash: nothing on the page can be
			// trusted to read back, so reclaim it whole.
			e.counters.writeErrors++
			e.closePage(p, false)
		}
		if p.written >= e.pageSize {
			p.active = false
		}
		w.page = nil
		e.spare = append(e.spare, w)
		e.maybeFree(p)
		e.queued--
		e.flushed.Broadcast()
		e.mu.Unlock()
	}
}
