package reactor

import (
	"testing"

	"github.com/gocached/gocached/internal/protocol"
)

// panicky is a Session whose Process panics; it records Abandon.
type panicky struct {
	Session   // the rest, never called
	abandoned bool
	again     bool // Abandon panics too
}

func (p *panicky) Process(in, out []byte) (int, []byte, protocol.Status) { panic("bug") }
func (p *panicky) Abandon() {
	p.abandoned = true
	if p.again {
		panic("again")
	}
}

// TestRunSessionAbandons: a Session that panics is told to give back what
// it holds in shared state (a metadump's crawler), even if that panics too.
func TestRunSessionAbandons(t *testing.T) {
	for _, again := range []bool{false, true} {
		p := &panicky{again: again}
		if _, _, _, err := RunSession(p, []byte("x"), nil); err == nil {
			t.Fatal("no error from a panicking Session")
		}
		if !p.abandoned {
			t.Errorf("again=%v: Abandon not called", again)
		}
	}
}
