//go:build linux

package store

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// memFile is the shared mapping of -e's file, which is the arena.
type memFile struct {
	path string
	f    *os.File
	mem  []byte
}

// openMemFile opens (creating it if needed) path, sizes it to size bytes
// and maps it shared.
func openMemFile(path string, size int64) (*memFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: memory file: %w", err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("store: memory file %s: %w", path, err)
	}
	p, err := unix.MmapPtr(int(f.Fd()), 0, nil, uintptr(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store: mmap of memory file %s: %w", path, err)
	}
	return &memFile{path: path, f: f, mem: unsafe.Slice((*byte)(p), size)}, nil
}

// sync writes the mapping back to the file (a no-op on tmpfs).
func (m *memFile) sync() error { return unix.Msync(m.mem, unix.MS_SYNC) }

// clear gives the file's pages back where the filesystem can (tmpfs, ext4,
// xfs): after a start that could not restore, the old bytes are garbage.
func (m *memFile) clear() {
	_ = unix.Fallocate(int(m.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, int64(len(m.mem)))
}
