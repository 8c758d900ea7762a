package extstore

// PageData is one page as memcached's stats extstore shows it, and what a
// compaction policy looks at.
type PageData struct {
	Version    uint64 // 0: free
	BytesUsed  uint64 // live record bytes
	Bucket     Bucket // the bucket writing it; 0 while free, active or empty
	FreeBucket Bucket // the bucket its file reserves it for
	Active     bool   // being written
}

// Pages appends every page's data, by page id, to dst.
func (e *Engine) Pages(dst []PageData) []PageData {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.pages {
		p := &e.pages[i]
		d := PageData{Version: p.version, BytesUsed: p.bytesUsed, FreeBucket: p.freeBucket, Active: p.active}
		// memcached names the bucket only of a page that is full of live
		// records and still readable.
		if !p.active && !p.free && p.objects > 0 && !p.closed {
			d.Bucket = p.bucket
		}
		dst = append(dst, d)
	}
	return dst
}
