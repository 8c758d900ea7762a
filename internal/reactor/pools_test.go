package reactor

import (
	"testing"
	"unsafe"
)

// TestReplacedReturnsMovedBuffer pins that a reply buffer a Session moved
// out of (a large reply goes to protocol's pooled buffer) comes back to the
// loop's pool, and that one still in use does not.
func TestReplacedReturnsMovedBuffer(t *testing.T) {
	var p LoopPools
	old := p.Write()
	old = append(old, "VALUE k 0 1\r\n"...)
	same := append(old, "x"...)
	p.Replaced(old, same)
	if len(p.writes) != 0 {
		t.Fatalf("a buffer still holding the replies went back to the pool")
	}
	moved := append(make([]byte, 0, 2<<20), old...)
	p.Replaced(old, moved)
	if len(p.writes) != 1 {
		t.Fatalf("pool holds %d buffers after a move, want 1", len(p.writes))
	}
	if got := p.Write(); unsafe.SliceData(got[:1]) != unsafe.SliceData(old[:1]) || len(got) != 0 {
		t.Fatalf("Write did not hand the moved-out buffer back, emptied")
	}
	p.Replaced(nil, moved) // a turn that started with no buffer
	if len(p.writes) != 0 {
		t.Fatalf("nil went into the pool")
	}
}
