package extstore

// Stats are the engine's counters under the names memcached's stats
// command prints them with an "extstore_" prefix (see Each), plus the
// read misses by cause.
type Stats struct {
	PageAllocs      uint64
	PageCount       uint64
	PageEvictions   uint64
	PageReclaims    uint64
	PageSize        uint64
	PagesFree       uint64
	PagesUsed       uint64
	ObjectsEvicted  uint64
	ObjectsRead     uint64
	ObjectsWritten  uint64
	ObjectsUsed     uint64
	BytesEvicted    uint64
	BytesWritten    uint64
	BytesRead       uint64 // of records read, from buffers or the files
	BytesUsed       uint64 // of live records
	BytesFragmented uint64 // used pages' bytes not holding live records, open pages included
	IOQueue         uint64 // reads waiting in the back end

	// Misses by cause. memcached counts them per worker thread as
	// miss_from_extstore and badcrc_from_extstore; see those methods.
	ReadStale    uint64 // page reclaimed since the write
	ReadBadCRC   uint64 // checksum or header mismatch, in reads and scans
	ReadShort    uint64 // the file ended inside the record
	ReadIOErrors uint64 // the read failed
	WriteErrors  uint64 // buffers that failed to reach a file (their page reclaimed)
}

// Stats is a snapshot of the counters.
func (e *Engine) Stats() Stats {
	queued := uint64(e.backend.Queued())
	e.mu.Lock()
	defer e.mu.Unlock()
	c := &e.counters
	used := uint64(len(e.pages) - e.nfree)
	return Stats{
		PageAllocs:      c.pageAllocs,
		PageCount:       uint64(len(e.pages)),
		PageEvictions:   c.pageEvictions,
		PageReclaims:    c.pageReclaims,
		PageSize:        e.pageSize,
		PagesFree:       uint64(e.nfree),
		PagesUsed:       used,
		ObjectsEvicted:  c.objectsEvicted,
		ObjectsRead:     c.objectsRead,
		ObjectsWritten:  c.objectsWritten,
		ObjectsUsed:     c.objectsUsed,
		BytesEvicted:    c.bytesEvicted,
		BytesWritten:    c.bytesWritten,
		BytesRead:       c.bytesRead,
		BytesUsed:       c.bytesUsed,
		BytesFragmented: used*e.pageSize - min(c.bytesUsed, used*e.pageSize),
		IOQueue:         queued,
		ReadStale:       c.readStale,
		ReadBadCRC:      c.readBadCRC,
		ReadShort:       c.readShort,
		ReadIOErrors:    c.readIOErrors,
		WriteErrors:     c.writeErrors,
	}
}

// LimitMaxbytes is the flash capacity: whole pages over all files.
func (s *Stats) LimitMaxbytes() uint64 { return s.PageCount * s.PageSize }

// MissFromExtstore is every read that turned into a miss.
func (s *Stats) MissFromExtstore() uint64 {
	return s.ReadStale + s.ReadBadCRC + s.ReadShort + s.ReadIOErrors
}

// BadCRCFromExtstore is the misses memcached counts as bad CRC: a checksum
// mismatch, or a read that came back short (memcached checks the CRC over
// the bytes it asked for).
func (s *Stats) BadCRCFromExtstore() uint64 { return s.ReadBadCRC + s.ReadShort }

// Each calls fn with the engine's lines of memcached's stats command, in
// its order: extstore_page_allocs to extstore_io_queue. memcached prints
// extstore_memory_pressure and the extstore_compact_* counters, which the
// compactor above keeps, just before them.
func (s *Stats) Each(fn func(name string, value uint64)) {
	fn("extstore_page_allocs", s.PageAllocs)
	fn("extstore_page_evictions", s.PageEvictions)
	fn("extstore_page_reclaims", s.PageReclaims)
	fn("extstore_pages_free", s.PagesFree)
	fn("extstore_pages_used", s.PagesUsed)
	fn("extstore_objects_evicted", s.ObjectsEvicted)
	fn("extstore_objects_read", s.ObjectsRead)
	fn("extstore_objects_written", s.ObjectsWritten)
	fn("extstore_objects_used", s.ObjectsUsed)
	fn("extstore_bytes_evicted", s.BytesEvicted)
	fn("extstore_bytes_written", s.BytesWritten)
	fn("extstore_bytes_read", s.BytesRead)
	fn("extstore_bytes_used", s.BytesUsed)
	fn("extstore_bytes_fragmented", s.BytesFragmented)
	fn("extstore_limit_maxbytes", s.LimitMaxbytes())
	fn("extstore_io_queue", s.IOQueue)
}

// EachPage calls fn with the lines of memcached's "stats extstore" for
// pages: N:version, N:bytes, N:bucket, N:free_bucket per page.
func EachPage(pages []PageData, fn func(page int, field string, value uint64)) {
	for i, p := range pages {
		fn(i, "version", p.Version)
		fn(i, "bytes", p.BytesUsed)
		fn(i, "bucket", uint64(p.Bucket))
		fn(i, "free_bucket", uint64(p.FreeBucket))
	}
}
