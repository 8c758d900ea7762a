package extstore

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// The start failures memcached 1.6.45 prints, checked against its binary.
func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "e")
	spec := func(size uint64) FileSpec { return FileSpec{Path: file, Size: size} }
	tests := []struct {
		name string
		cfg  func() Config
		msg  string
		exit int
	}{
		{"too small", func() Config { return DefaultConfig(spec(1 << 20)) }, "supplied ext_path has zero size, cannot use", 64},
		{"second file too small", func() Config { return DefaultConfig(spec(64<<20), spec(8<<20)) }, "supplied ext_path has zero size, cannot use", 64},
		{"page not wbuf multiple", func() Config {
			c := DefaultConfig(spec(64 << 20))
			c.PageSize = 6 << 20
			return c
		}, "Failed to initialize external storage: page_size must be divisible by wbuf_size", 1},
		{"unaligned", func() Config {
			c := DefaultConfig(spec(64 << 20))
			c.PageSize, c.WbufSize = 3<<20, 1<<20
			return c
		}, "Failed to initialize external storage: page_size and wbuf_size must be divisible by 1024*1024*2", 1},
		{"too many pages", func() Config {
			c := DefaultConfig(spec(1 << 40))
			c.PageSize, c.WbufSize = 2<<20, 2<<20
			return c
		}, "Failed to initialize external storage: page_count must total to < 65536. Increase page_size or lower path sizes", 1},
		{"unwritable", func() Config {
			return DefaultConfig(FileSpec{Path: filepath.Join(dir, "missing", "e"), Size: 64 << 20})
		}, "Failed to initialize external storage: failed to open file\nextstore open: No such file or directory", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Open(tt.cfg())
			if err == nil {
				e.Close()
				t.Fatal("Open succeeded")
			}
			var se *StartError
			if !errors.As(err, &se) || se.Message != tt.msg || se.ExitCode != tt.exit {
				t.Fatalf("Open error = %#v, want %q exit %d", err, tt.msg, tt.exit)
			}
		})
	}
}

func TestOpenTruncatesAndLocksFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig(dir, 1)
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.PageCount() != 4 {
		t.Fatalf("PageCount = %d, want 4", e.PageCount())
	}
	if !strings.HasPrefix(cfg.Files[0].Path, dir) {
		t.Fatal("file outside the test dir")
	}
}
