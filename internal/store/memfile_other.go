//go:build !linux

package store

import "errors"

// memFile needs Linux's shared file mappings.
type memFile struct {
	path string
	mem  []byte
}

func openMemFile(string, int64) (*memFile, error) {
	return nil, errors.New("store: a memory file (-e) needs Linux")
}

func (m *memFile) sync() error { return nil }
func (m *memFile) clear()      {}
