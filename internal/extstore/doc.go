// Package extstore is the flash page engine behind memcached's -o ext_*
// options: it appends values into write buffers, writes full buffers to
// fixed-size pages of one or more files (ext_path, several paths for JBOD),
// reads them back by location, and accounts every page so the store above
// can reclaim or compact pages as memcached does.
//
// The split follows memcached's: this package knows pages, buffers, versions
// and records; it does not know items. The store keeps a Location in the RAM
// item header, calls Delete when the item goes away, and decides, page by
// page, which records a compaction rescues (ScanPage, then ClosePage).
//
// A Location stays valid until its page is reclaimed. Reclaiming a page gives
// it a new version when it is reused, so an old Location reads as a miss,
// never as another item's bytes. A record carries a CRC-32C over its header,
// key and value; a mismatch, a short read or an I/O error is a miss too, and
// each kind is counted in Stats.
//
// Disk I/O never runs on the caller's goroutine: reads go through Submit to a
// Backend (a bounded pool of ext_threads goroutines by default; a ring-based
// back end can replace it), and full write buffers are written by one writer
// goroutine so a page's buffers land in order. Write itself only copies into
// a buffer; when no buffer is free it returns ErrBusy and the caller retries,
// as memcached's write path does.
//
// Pages may outlive the process (restart.go): Save flushes the buffers and
// describes the pages in use; an engine opened with Config.Keep on the
// same, untouched files Restores that State, or Discards it.
//
// Memory is bounded by the configuration, not the file sizes: at most
// WbufCount buffers of WbufSize bytes (allocated on first use), one scan
// buffer of WbufSize per running ScanPage, and under 120 bytes of state
// per page (65534 pages at most, so under 8 MB however large the files).
package extstore
