package bench

import (
	"errors"
	"strings"
	"testing"
)

// failAfter accepts n writes, then fails every write.
type failAfter struct {
	n      int
	writes int
	sb     strings.Builder
}

var errFull = errors.New("disk full")

func (f *failAfter) Write(b []byte) (int, error) {
	f.writes++
	if f.writes > f.n {
		return 0, errFull
	}
	return f.sb.Write(b)
}

// TestPrinterKeepsFirstError: after a failed write the printer stops
// writing and reports that first error.
func TestPrinterKeepsFirstError(t *testing.T) {
	w := &failAfter{n: 1}
	p := NewPrinter(w)
	p.Printf("a %d\n", 1)
	if p.Err() != nil {
		t.Fatalf("error after a good write: %v", p.Err())
	}
	p.Printf("b\n")
	p.Printf("c\n")
	if !errors.Is(p.Err(), errFull) {
		t.Fatalf("Err() = %v, want %v", p.Err(), errFull)
	}
	if w.writes != 2 || w.sb.String() != "a 1\n" {
		t.Fatalf("%d writes, wrote %q; want 2 writes, %q", w.writes, w.sb.String(), "a 1\n")
	}
}
