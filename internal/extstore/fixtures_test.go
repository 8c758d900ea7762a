package extstore

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// Test sizes: pages of two buffers, files of four pages, small enough for
// the race detector to copy quickly.
const (
	tWbuf = 128 << 10
	tPage = 2 * tWbuf
	tFile = 4 * tPage
)

// smallConfig is nfiles files of four pages.
func smallConfig(dir string, nfiles int) Config {
	var files []FileSpec
	for i := range nfiles {
		files = append(files, FileSpec{Path: filepath.Join(dir, fmt.Sprintf("ext%d", i)), Size: tFile})
	}
	cfg := DefaultConfig(files...)
	cfg.PageSize, cfg.WbufSize, cfg.TestAlign = tPage, tWbuf, tWbuf
	return cfg
}

// quarterPage is a record that takes exactly a quarter page on flash.
func quarterPage(i int) Record {
	rec := testRecord(i, tPage/4)
	rec.Value = rec.Value[:tPage/4-headerSize-len(rec.Key)]
	return rec
}

func openEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func testRecord(i, size int) Record {
	key := fmt.Appendf(nil, "key:%d", i)
	val := bytes.Repeat(fmt.Appendf(nil, "%d,", i), size/2+1)[:size]
	return Record{Key: key, Value: val, CAS: uint64(i) + 1, Flags: uint32(i)}
}

func sameRecord(a, b Record) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && a.CAS == b.CAS && a.Flags == b.Flags
}

// mustWrite writes, waiting out ErrBusy while the writer drains buffers.
func mustWrite(t testing.TB, e *Engine, b Bucket, rec Record) Location {
	t.Helper()
	for {
		loc, err := e.Write(b, rec)
		if err == nil {
			return loc
		}
		if err != ErrBusy {
			t.Fatalf("Write(%s): %v", rec.Key, err)
		}
		e.WaitWrites()
	}
}

// faultFile wraps a page file with switchable faults.
type faultFile struct {
	File
	mu       sync.Mutex
	readErr  error
	short    int  // bytes cut off every read
	flip     bool // flip a bit in every read
	writeErr error
	reads    int
}

func (f *faultFile) set(fn func(*faultFile)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *faultFile) ReadAt(b []byte, off int64) (int, error) {
	f.mu.Lock()
	readErr, short, flip := f.readErr, f.short, f.flip
	f.reads++
	f.mu.Unlock()
	if readErr != nil {
		return 0, readErr
	}
	n, err := f.File.ReadAt(b[:len(b)-min(short, len(b))], off)
	if flip && n > 0 {
		b[n/2] ^= 0x10
	}
	return n, err
}

func (f *faultFile) WriteAt(b []byte, off int64) (int, error) {
	f.mu.Lock()
	writeErr := f.writeErr
	f.mu.Unlock()
	if writeErr != nil {
		return 0, writeErr
	}
	return f.File.WriteAt(b, off)
}

// faultConfig is smallConfig with every file wrapped; files lists them.
func faultConfig(dir string, nfiles int) (Config, *[]*faultFile) {
	cfg := smallConfig(dir, nfiles)
	files := new([]*faultFile)
	var mu sync.Mutex
	cfg.Open = func(path string) (File, error) {
		f, err := OpenOSFile(path)
		if err != nil {
			return nil, err
		}
		ff := &faultFile{File: f}
		mu.Lock()
		*files = append(*files, ff)
		mu.Unlock()
		return ff, nil
	}
	return cfg, files
}
