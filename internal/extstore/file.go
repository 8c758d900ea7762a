package extstore

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// File is what the engine needs of a page file: positional reads and
// writes, and for a restart (Config.Keep, Save) truncation, sync and the
// file's size and modification time. *os.File is one; tests wrap it to
// inject short reads, EIO or bit flips.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	Truncate(size int64) error
	Sync() error
	Stat() (os.FileInfo, error)
}

// OpenOSFile opens path as memcached does: created if missing (mode 0644)
// and locked against a second server on the same file. Open then
// truncates it, as memcached does, unless Config.Keep asks to keep its
// pages for a restart.
func OpenOSFile(path string) (File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "lock", Path: path, Err: err}
	}
	return f, nil
}

// errnoText is strerror's text for the errno inside err, as perror prints it.
func errnoText(err error) string {
	var no syscall.Errno
	if errors.As(err, &no) {
		s := no.Error()
		if s != "" && s[0] >= 'a' && s[0] <= 'z' {
			return string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	return err.Error()
}
