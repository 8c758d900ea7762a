//go:build !linux

package store

import "errors"

// memFile needs Linux's shared file mappings.
type memFile struct{ path string }

func openMemFile(string, int, int) (*memFile, error) {
	return nil, errors.New("store: a memory file (-e) needs Linux")
}

func (m *memFile) ringAt(int) []byte      { return nil }
func (m *memFile) holds([]byte, int) bool { return false }
func (m *memFile) sync() error            { return nil }
func (m *memFile) clear()                 {}
