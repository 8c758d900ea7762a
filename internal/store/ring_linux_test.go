package store

import (
	"testing"
	"unsafe"
)

func TestMappedRingsAlignedToHugePages(t *testing.T) {
	for _, n := range []int{64 << 10, hugePage, 3*hugePage + 4096, 16 << 20} {
		b, err := mapRing(n, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != n {
			t.Fatalf("ring of %d bytes has %d", n, len(b))
		}
		if n >= hugePage && uintptr(unsafe.Pointer(&b[0]))%hugePage != 0 {
			t.Fatalf("ring of %d bytes at %p", n, &b[0])
		}
		b[0], b[n-1] = 1, 2 // writable end to end
		unmapRing(b)
	}
}
