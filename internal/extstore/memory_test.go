package extstore

import (
	"testing"
	"unsafe"
)

// The package doc promises under 120 bytes of state per page: the page
// and its free-list slot.
func TestPageStateSize(t *testing.T) {
	if n := unsafe.Sizeof(page{}) + unsafe.Sizeof((*page)(nil)); n >= 120 {
		t.Fatalf("per-page state %d bytes; the package doc says under 120", n)
	}
}

// Write buffers are allocated on first use and never beyond WbufCount,
// however much is written.
func TestWriteBuffersBounded(t *testing.T) {
	e := openEngine(t, smallConfig(t.TempDir(), 2))
	for i := range 200 {
		mustWrite(t, e, Bucket(i%3), quarterPage(i))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.made > e.cfg.WbufCount || e.made < 3 {
		t.Fatalf("%d write buffers made, want 3..%d", e.made, e.cfg.WbufCount)
	}
}
