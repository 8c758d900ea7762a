package extstore

import (
	"errors"
	"io"
)

// Why a read missed. Every read error is a miss: the caller treats the
// item as absent (and unlinks its header), never as a value.
var (
	ErrStale    = errors.New("extstore: page reclaimed since the write")
	ErrChecksum = errors.New("extstore: record checksum mismatch")
	ErrShort    = errors.New("extstore: short read")
	ErrIO       = errors.New("extstore: read error")
)

// readPlan is a read after its checks under the lock: either done from a
// write buffer, or a file range to read with a reference held on the page.
type readPlan struct {
	page *page
	file File
	off  int64
	done bool
	err  error
}

// planRead checks loc and copies it from a write buffer when its bytes
// are not on flash yet. Otherwise it takes a reference on the page, so
// the page is not reused while the file read runs. buf holds loc.Len bytes.
func (e *Engine) planRead(loc Location, buf []byte) readPlan {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.pageAt(loc)
	if p == nil || uint64(loc.Offset)+uint64(loc.Len) > e.pageSize {
		e.counters.readStale++
		return readPlan{done: true, err: ErrStale}
	}
	e.counters.objectsRead++
	e.counters.bytesRead += uint64(loc.Len)
	off := uint64(loc.Offset)
	if off >= p.written {
		for _, w := range p.wbufs {
			if off >= w.offset && off+uint64(loc.Len) <= w.offset+uint64(w.used) {
				copy(buf, w.buf[off-w.offset:])
				return readPlan{done: true}
			}
		}
		// Past everything written to the page: the location was never
		// handed out.
		e.counters.readBadCRC++
		return readPlan{done: true, err: ErrChecksum}
	}
	p.refs++
	return readPlan{page: p, file: p.file, off: p.base + int64(off)}
}

// finishRead drops the plan's page reference and turns the outcome into a
// record or a counted miss.
func (e *Engine) finishRead(pl readPlan, buf []byte, n int, ioErr error) (Record, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if pl.page != nil {
		pl.page.refs--
		e.maybeFree(pl.page)
	}
	err := pl.err
	switch {
	case err != nil:
	case errors.Is(ioErr, ErrClosed):
		err = ErrClosed
	case n < len(buf) && (ioErr == nil || errors.Is(ioErr, io.EOF)):
		err = ErrShort
		e.counters.readShort++
	case ioErr != nil && n < len(buf):
		err = ErrIO
		e.counters.readIOErrors++
	}
	if err != nil {
		return Record{}, err
	}
	rec, ok := decode(buf)
	if !ok {
		e.counters.readBadCRC++
		return Record{}, ErrChecksum
	}
	return rec, nil
}
