package extstore

// ScanPage reads a page a buffer at a time and calls fn with each record
// and its location, in write order, until fn returns false. It is for the
// compactor, which decides per record (its RAM item still points at loc
// with the same CAS) whether to rescue it, so it reads on the calling
// goroutine. rec's slices are valid only during the call.
//
// As memcached's compactor, it holds the page only while a buffer is read:
// fn runs on a copy, so a Delete from fn that leaves the page without a
// live record frees it at once (the rescue of a page's last records then
// has that page to write to, where holding it would make the write evict
// one), and the scan ends there with ErrStale.
//
// Records deleted since they were written are still on the page and are
// passed too. A buffer whose record fails its checksum is skipped from that
// record on, and counted. ErrStale: the page is being written, or was
// reclaimed before or during the scan.
func (e *Engine) ScanPage(id uint16, version uint64, fn func(loc Location, rec Record) bool) error {
	buf := make([]byte, e.wbufSize)
	for off := uint64(0); off < e.pageSize; off += e.wbufSize {
		if err := e.readForScan(id, version, off, buf); err != nil {
			return err
		}
		if !e.scanBuffer(buf, id, version, off, fn) {
			return nil
		}
	}
	return nil
}

// readForScan reads the buffer at off of the page (id, version) into buf,
// holding the page against reclaim only for the read.
func (e *Engine) readForScan(id uint16, version uint64, off uint64, buf []byte) error {
	e.mu.Lock()
	p := e.pageAt(Location{Page: id, Version: version})
	if p == nil || p.active {
		e.mu.Unlock()
		return ErrStale
	}
	p.refs++
	// Counted as one object read, as memcached counts each read of its
	// compactor (extstore_objects_read, extstore_bytes_read).
	e.counters.objectsRead++
	e.counters.bytesRead += uint64(len(buf))
	e.mu.Unlock()
	n, err := p.file.ReadAt(buf, p.base+int64(off))
	e.mu.Lock()
	defer e.mu.Unlock()
	p.refs--
	closed := p.closed
	e.maybeFree(p)
	if err != nil && n < len(buf) {
		e.counters.readIOErrors++
	}
	switch {
	case closed:
		return ErrStale
	case err != nil && n < len(buf):
		return ErrIO
	}
	return nil
}

// scanBuffer walks the records of one written buffer; false when fn asked
// to stop.
func (e *Engine) scanBuffer(buf []byte, id uint16, version uint64, off uint64, fn func(Location, Record) bool) bool {
	for pos := 0; pos < len(buf); {
		l := recordLen(buf[pos:])
		if l == 0 {
			return true // the zeroed tail
		}
		rec, ok := decode(buf[pos:min(pos+l, len(buf))])
		if !ok {
			e.mu.Lock()
			e.counters.readBadCRC++
			e.mu.Unlock()
			return true
		}
		loc := Location{Page: id, Version: version, Offset: uint32(off) + uint32(pos), Len: uint32(l)}
		if !fn(loc, rec) {
			return false
		}
		pos += l
	}
	return true
}
