package extstore

import (
	"errors"
	"fmt"
)

// Keeping the pages across a restart, which memcached does not do: the
// store above saves its RAM (with the item headers that hold Locations)
// and, with it, the State Save returns; the next start opens the engine
// with Config.Keep, so the files are not truncated, and either Restores
// that State or Discards the old pages.
//
// A State only describes pages: which are in use, at which version, for
// which bucket, how far written. The live record counts are not saved but
// recounted from the headers the store finds (Adopt), so the engine's
// objects_used and bytes_used are those of the items that came back;
// Settle then frees the pages no header points at. Every read is still
// checked by its record's CRC-32C, and the store checks key, CAS and
// length, but a State is only trusted for the same files, untouched since
// the save: each file's length and modification time are part of it.

// State is an engine's pages as Save left them.
type State struct {
	PageSize    uint64      `json:"page_size"`
	WbufSize    uint64      `json:"wbuf_size"`
	Files       []FileState `json:"files"`
	NextVersion uint64      `json:"next_version"` // the version the next page allocated gets
	Pages       []PageState `json:"pages"`        // the pages in use, by id
}

// FileState is one file as the configuration named it and as Save left
// it on disk.
type FileState struct {
	Path       string `json:"path"`
	Size       uint64 `json:"size"`
	FreeBucket Bucket `json:"free_bucket"`
	Length     int64  `json:"length"`   // bytes in the file after the save
	Modified   int64  `json:"modified"` // its modification time, ns since 1970
}

// PageState is one page in use.
type PageState struct {
	ID      uint16 `json:"id"`
	Version uint64 `json:"version"`
	Bucket  Bucket `json:"bucket"`  // the bucket that wrote it
	Written uint64 `json:"written"` // bytes on flash; under a page: the bucket's current page
}

// Save writes every write buffer to its page, syncs the files and returns
// the pages in use. The caller has stopped writing and compacting; reads
// may still finish. Records whose buffer fails to write are lost (their
// page is reclaimed), as at any time.
func (e *Engine) Save() (State, error) {
	e.mu.Lock()
	if e.shut {
		e.mu.Unlock()
		return State{}, ErrClosed
	}
	for i := range e.pages {
		if w := e.pages[i].openBuffer(); w != nil {
			e.submit(w)
		}
	}
	for e.queued > 0 {
		e.flushed.Wait()
	}
	st := State{PageSize: e.pageSize, WbufSize: e.wbufSize, NextVersion: e.version}
	for i := range e.pages {
		p := &e.pages[i]
		if p.free || p.closed {
			continue // a closed page's locations are misses already
		}
		if len(p.wbufs) > 0 {
			e.mu.Unlock()
			return State{}, errors.New("extstore: a buffer was written during the save")
		}
		st.Pages = append(st.Pages, PageState{ID: p.id, Version: p.version, Bucket: p.bucket, Written: p.written})
	}
	e.mu.Unlock()
	for i, f := range e.files {
		if err := f.Sync(); err != nil {
			return State{}, fmt.Errorf("extstore: sync %s: %w", e.cfg.Files[i].Path, err)
		}
		fs, err := e.fileState(i)
		if err != nil {
			return State{}, err
		}
		st.Files = append(st.Files, fs)
	}
	return st, nil
}

// fileState is file i as the configuration names it and as it is now.
func (e *Engine) fileState(i int) (FileState, error) {
	spec := e.cfg.Files[i]
	fi, err := e.files[i].Stat()
	if err != nil {
		return FileState{}, fmt.Errorf("extstore: stat %s: %w", spec.Path, err)
	}
	return FileState{Path: spec.Path, Size: spec.Size, FreeBucket: spec.FreeBucket,
		Length: fi.Size(), Modified: fi.ModTime().UnixNano()}, nil
}

// Restore takes st's pages as in use, with no live record yet: the caller
// Adopts each location it still holds, then calls Settle. It refuses a
// State of other files, sizes or buckets, of files changed since the
// save, or one that does not parse, and then leaves the engine as it was
// (every page free). Only an engine opened with Config.Keep that has not
// been written to may restore.
func (e *Engine) Restore(st State) error {
	if err := e.matches(st); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.cfg.Keep {
		return errors.New("extstore: the files were truncated at open (no Keep)")
	}
	if e.nfree != len(e.pages) || e.counters.pageAllocs != 0 {
		return errors.New("extstore: restore into an engine in use")
	}
	if err := e.checkPages(st); err != nil {
		return err
	}
	for _, ps := range st.Pages {
		p := &e.pages[ps.ID]
		p.free, p.version, p.bucket = false, ps.Version, ps.Bucket
		p.written, p.allocated = ps.Written, ps.Written
		if ps.Written < e.pageSize {
			p.active = true // its bucket goes on writing it
			e.current[ps.Bucket] = p
		}
		e.nfree--
	}
	e.rebuildFreeLists()
	e.version = st.NextVersion
	return nil
}

// matches checks that st was saved by an engine of this configuration on
// these files, unchanged since.
func (e *Engine) matches(st State) error {
	if st.PageSize != e.pageSize || st.WbufSize != e.wbufSize {
		return fmt.Errorf("extstore: saved with ext_page_size %d and ext_wbuf_size %d bytes, now %d and %d",
			st.PageSize, st.WbufSize, e.pageSize, e.wbufSize)
	}
	if len(st.Files) != len(e.cfg.Files) {
		return fmt.Errorf("extstore: saved with %d ext_path files, now %d", len(st.Files), len(e.cfg.Files))
	}
	for i, saved := range st.Files {
		now, err := e.fileState(i)
		if err != nil {
			return err
		}
		switch {
		case saved.Path != now.Path || saved.Size != now.Size || saved.FreeBucket != now.FreeBucket:
			return fmt.Errorf("extstore: ext_path %d was %s, now %s", i+1,
				FileSpec{Path: saved.Path, Size: saved.Size, FreeBucket: saved.FreeBucket}, e.cfg.Files[i])
		case saved.Length != now.Length || saved.Modified != now.Modified:
			return fmt.Errorf("extstore: %s changed since the save", now.Path)
		}
	}
	return nil
}

// checkPages checks st's page list against the layout. Called with e.mu
// held.
func (e *Engine) checkPages(st State) error {
	seen := make(map[uint16]bool, len(st.Pages))
	versions := make(map[uint64]bool, len(st.Pages))
	var writing [BucketCount]bool
	for _, ps := range st.Pages {
		bad := ""
		switch {
		case int(ps.ID) >= len(e.pages) || seen[ps.ID]:
			bad = "page id"
		case ps.Version == 0 || ps.Version >= st.NextVersion || versions[ps.Version]:
			bad = "version"
		case ps.Bucket >= BucketCount || e.pages[ps.ID].freeBucket != BucketDefault && e.pages[ps.ID].freeBucket != ps.Bucket:
			bad = "bucket"
		case ps.Written == 0 || ps.Written > e.pageSize || ps.Written%e.wbufSize != 0:
			bad = "written length"
		case ps.Written < e.pageSize && writing[ps.Bucket]:
			bad = "second page being written"
		}
		if bad != "" {
			return fmt.Errorf("extstore: saved page %d: %s does not parse", ps.ID, bad)
		}
		seen[ps.ID], versions[ps.Version] = true, true
		writing[ps.Bucket] = writing[ps.Bucket] || ps.Written < e.pageSize
	}
	return nil
}

// rebuildFreeLists puts the free pages back on their stacks, lowest ids on
// top. Called with e.mu held.
func (e *Engine) rebuildFreeLists() {
	for b := range e.freeList {
		e.freeList[b] = e.freeList[b][:0]
	}
	for i := len(e.pages) - 1; i >= 0; i-- {
		if p := &e.pages[i]; p.free {
			e.freeList[p.freeBucket] = append(e.freeList[p.freeBucket], p)
		}
	}
}

// Adopt counts loc as a live record again after Restore: a header the
// store kept points at it. False when loc is not on a restored page (its
// version, or its bytes past what was written): the caller drops the
// header, whose read would miss.
func (e *Engine) Adopt(loc Location) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.pageAt(loc)
	if p == nil || loc.Len == 0 || uint64(loc.Offset)+uint64(loc.Len) > p.written {
		return false
	}
	n := uint64(loc.Len)
	p.objects++
	p.bytesUsed += n
	e.counters.objectsUsed++
	e.counters.bytesUsed += n
	return true
}

// Settle ends a restore: the pages no adopted location points at are free
// again (the one each bucket goes on writing stays), and the counters
// start from zero but for the live records' objects and bytes.
func (e *Engine) Settle() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.pages {
		e.maybeFree(&e.pages[i])
	}
	e.counters = counters{objectsUsed: e.counters.objectsUsed, bytesUsed: e.counters.bytesUsed}
}

// Discard forgets every page (all free again, versions from the start)
// and truncates the files, as Open does without Keep: a start that does
// not restore the pages. The caller has not written yet, or wrote nothing
// it still points at.
func (e *Engine) Discard() error {
	e.mu.Lock()
	for e.queued > 0 {
		e.flushed.Wait()
	}
	for i := range e.pages {
		if w := e.pages[i].openBuffer(); w != nil {
			w.page = nil
			e.spare = append(e.spare, w)
		}
	}
	e.layout(len(e.pages))
	e.rebuildFreeLists()
	e.current = [BucketCount]*page{}
	e.version = 1
	e.counters = counters{}
	e.mu.Unlock()
	var errs []error
	for i, f := range e.files {
		if err := f.Truncate(0); err != nil {
			errs = append(errs, fmt.Errorf("extstore: truncate %s: %w", e.cfg.Files[i].Path, err))
		}
	}
	return errors.Join(errs...)
}
