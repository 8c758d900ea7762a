package extstore

import (
	"errors"
	"sync"
)

// Location is where Write put a record; the store keeps it in the RAM item
// header. Version ties it to one use of the page: once the page is
// reclaimed the location reads as a miss.
type Location struct {
	Page    uint16
	Version uint64
	Offset  uint32 // within the page
	Len     uint32 // of the whole record
}

// Errors of Write. Every error of a read is a miss (see ReadResult).
var (
	ErrTooLarge = errors.New("extstore: record larger than a write buffer")
	ErrBusy     = errors.New("extstore: no write buffer free; retry")
	ErrFull     = errors.New("extstore: no page free; retry")
	ErrClosed   = errors.New("extstore: engine closed")
)

// page is the per-page state, the part of memory that grows with the files.
type page struct {
	file       File
	base       int64  // page start in file
	version    uint64 // 0 while free
	objects    uint64 // live records; Delete decrements
	bytesUsed  uint64 // live record bytes; Delete decrements
	allocated  uint64 // bytes of the page given to write buffers
	written    uint64 // bytes of the page on flash
	wbufs      []*wbuf
	refs       int32 // reads and scans in flight on the file
	id         uint16
	bucket     Bucket
	freeBucket Bucket
	active     bool // being written
	closed     bool // reclaimed, draining before free
	free       bool
}

// wbuf is a write buffer: records are appended in RAM, and the full buffer
// is written to its page at once.
type wbuf struct {
	buf    []byte
	used   int
	offset uint64 // in its page
	page   *page
	full   bool
}

// Engine is one extstore: its files, pages and buffers.
type Engine struct {
	cfg      Config
	files    []File
	backend  Backend
	pageSize uint64
	wbufSize uint64

	mu       sync.Mutex
	pages    []page
	current  [BucketCount]*page   // page each bucket writes to
	freeList [BucketCount][]*page // free pages by the bucket they serve
	nfree    int
	version  uint64
	spare    []*wbuf
	made     int // write buffers allocated so far
	counters counters
	shut     bool

	flushes chan *wbuf
	queued  int       // buffers in flushes or being written
	flushed sync.Cond // signalled on e.mu as each buffer is written
	writer  sync.WaitGroup
}

// Open checks cfg, opens (creating and truncating) its files and lays its
// pages out. A configuration memcached refuses is a *StartError.
func Open(cfg Config) (*Engine, error) {
	if cfg.Open == nil {
		cfg.Open = OpenOSFile
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, pageSize: cfg.PageSize, wbufSize: cfg.WbufSize, version: 1}
	for _, f := range cfg.Files {
		fh, err := cfg.Open(f.Path)
		if err != nil {
			e.closeFiles()
			return nil, openError(err)
		}
		e.files = append(e.files, fh)
		if cfg.Keep {
			continue
		}
		// Nothing on the file survives a start that does not restore it.
		if err := fh.Truncate(0); err != nil {
			e.closeFiles()
			return nil, openError(err)
		}
	}
	n, err := cfg.checkPages()
	if err != nil {
		e.closeFiles()
		return nil, err
	}
	e.layout(n)
	e.backend = cfg.Backend
	if e.backend == nil {
		e.backend = NewPool(cfg.Threads, cfg.IODepth)
	}
	e.flushes = make(chan *wbuf, cfg.WbufCount)
	e.flushed.L = &e.mu
	e.writer.Add(1)
	go e.writeLoop()
	return e, nil
}

// layout interleaves the pages over the files as memcached does. memcached
// keeps the ext_path list newest first, so the round robin starts at the
// last file given; page i goes to the next file that still has pages left,
// and a bucket's consecutive pages spread over the devices.
func (e *Engine) layout(n int) {
	nf := len(e.cfg.Files)
	left := make([]uint64, nf)
	next := make([]int64, nf)
	for i, f := range e.cfg.Files {
		left[i] = e.cfg.pageCount(f)
	}
	e.pages = make([]page, n)
	fi := 0 // position in memcached's list; file nf-1-fi
	for i := range e.pages {
		for first := i == 0; ; first = false {
			if !first {
				fi = (fi + 1) % nf
			}
			if left[nf-1-fi] > 0 {
				break
			}
		}
		f := nf - 1 - fi
		left[f]--
		e.pages[i] = page{file: e.files[f], base: next[f], id: uint16(i),
			freeBucket: e.cfg.Files[f].FreeBucket, free: true}
		next[f] += int64(e.pageSize)
	}
	// Lowest ids on top of each free stack, so they are used first.
	for i := n - 1; i >= 0; i-- {
		p := &e.pages[i]
		e.freeList[p.freeBucket] = append(e.freeList[p.freeBucket], p)
	}
	e.nfree = n
}

// PageCount is the pages over all files.
func (e *Engine) PageCount() int { return len(e.pages) }

// PageSize is the bytes of a page.
func (e *Engine) PageSize() uint64 { return e.pageSize }

// WbufSize is the bytes of a write buffer (ext_wbuf_size).
func (e *Engine) WbufSize() uint64 { return e.wbufSize }

// Close completes the reads submitted, stops the writer once the buffers
// handed to it are written, and closes the files. Later reads get
// ErrClosed; the caller stops writing first.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.shut {
		e.mu.Unlock()
		return ErrClosed
	}
	e.shut = true
	e.mu.Unlock()
	e.backend.Close()
	close(e.flushes)
	e.writer.Wait()
	return e.closeFiles()
}

func (e *Engine) closeFiles() error {
	var first error
	for _, f := range e.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	e.files = nil
	return first
}
