package extstore

import (
	"fmt"
	"os"
)

// Config sizes an engine. Sizes are bytes (memcached's ext_page_size and
// ext_wbuf_size options are megabytes; the caller multiplies).
type Config struct {
	// Files in command-line order (ext_path given several times).
	Files    []FileSpec
	PageSize uint64 // ext_page_size; memcached's default 64 MB
	WbufSize uint64 // ext_wbuf_size; memcached's default 4 MB
	// WbufCount caps the write buffers; memcached uses one per bucket.
	WbufCount int
	Threads   int // ext_threads: read workers of the default back end
	IODepth   int // ext_io_depth: requests a worker takes per batch
	// Open opens a file for the engine; nil is OpenOSFile. Tests put
	// faults here.
	Open func(path string) (File, error)
	// Backend runs the reads; nil is NewPool(Threads, IODepth).
	Backend Backend
	// Keep leaves the files' bytes alone at Open (memcached truncates
	// them): the caller then either Restores a saved State, or Discards
	// the old pages (restart.go). Until then every page is free.
	Keep bool

	// TestAlign, for tests only, replaces the 2 MB multiple page and
	// buffer sizes must be, so tests of this package and the packages
	// above run on small pages; 0 is memcached's rule.
	TestAlign uint64
}

// DefaultConfig is memcached 1.6.45's extstore configuration for files.
func DefaultConfig(files ...FileSpec) Config {
	return Config{
		Files:     files,
		PageSize:  64 << 20,
		WbufSize:  4 << 20,
		WbufCount: BucketCount,
		Threads:   1,
		IODepth:   1,
	}
}

// maxPages is memcached's page limit: page ids are 16 bits and the count
// must stay below UINT16_MAX.
const maxPages = 1<<16 - 1

// maxPageSize keeps page offsets in 32 bits.
const maxPageSize = 1<<32 - align

// align is the flash erase-block multiple memcached requires of page and
// buffer sizes.
const align = 2 << 20

// StartError is a configuration memcached refuses at start. Message holds
// the lines memcached prints on stderr; ExitCode its exit status.
type StartError struct {
	Message  string
	ExitCode int
	Err      error // the file error for an open failure
}

func (e *StartError) Error() string { return e.Message }
func (e *StartError) Unwrap() error { return e.Err }

const initFailed = "Failed to initialize external storage: "

func initError(reason string) *StartError {
	return &StartError{Message: initFailed + reason, ExitCode: 1}
}

// pageCount is a file's whole pages.
func (c *Config) pageCount(f FileSpec) uint64 { return f.Size / c.PageSize }

// check refuses what memcached refuses before opening any file, in its
// order: a file of no whole page (exit 64, from its option checks), then
// extstore_init's size rules.
func (c *Config) check() error {
	if len(c.Files) == 0 {
		return &StartError{Message: "missing argument to ext_path, ie: ext_path=/d/file:5G", ExitCode: 1}
	}
	if c.PageSize == 0 || c.WbufSize == 0 {
		return initError("page_size and wbuf_size must be divisible by 1024*1024*2")
	}
	for _, f := range c.Files {
		if c.pageCount(f) == 0 {
			return &StartError{Message: "supplied ext_path has zero size, cannot use", ExitCode: 64}
		}
	}
	if c.PageSize%c.WbufSize != 0 {
		return initError("page_size must be divisible by wbuf_size")
	}
	if c.WbufCount < BucketCount {
		return initError("wbuf_count must be >= page_buckets")
	}
	a := c.TestAlign
	if a == 0 {
		a = align
	}
	if c.PageSize%a != 0 || c.WbufSize%a != 0 {
		return initError("page_size and wbuf_size must be divisible by 1024*1024*2")
	}
	if c.PageSize > maxPageSize {
		// memcached's page size is a 32-bit byte count; so are offsets
		// in a Location.
		return fmt.Errorf("extstore: ext_page_size must be under 4096 (megabytes)")
	}
	if c.Threads < 1 || c.IODepth < 1 {
		return fmt.Errorf("extstore: ext_threads and ext_io_depth must be at least 1")
	}
	return nil
}

// checkPages is memcached's last init check, made once the files are open.
func (c *Config) checkPages() (int, error) {
	var n uint64
	for _, f := range c.Files {
		n += c.pageCount(f)
		if n >= maxPages {
			return 0, initError("page_count must total to < 65536. Increase page_size or lower path sizes")
		}
	}
	return int(n), nil
}

// openError is memcached's message for a file it cannot open, lock or
// truncate; its perror line follows the first.
func openError(err error) *StartError {
	msg := initFailed + "failed to open file"
	if pe, ok := err.(*os.PathError); ok {
		msg += "\nextstore open: " + errnoText(pe.Err)
	}
	return &StartError{Message: msg, ExitCode: 1, Err: err}
}
