package bench

import (
	"fmt"
	"io"
)

// Printer writes formatted text and keeps the first write error, so a
// report can print many lines and check for failure once at the end.
type Printer struct {
	w   io.Writer
	err error
}

// NewPrinter returns a Printer writing to w.
func NewPrinter(w io.Writer) *Printer { return &Printer{w: w} }

// Printf writes unless an earlier write failed.
func (p *Printer) Printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// Err is the first write error, nil if every write succeeded.
func (p *Printer) Err() error { return p.err }
