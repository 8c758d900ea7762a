package store

import (
	"fmt"
	"strings"
	"testing"
)

// evictions.t: items stored with an exptime and then evicted count as
// evicted_nonzero in their class; items without one do not.
func TestEvictedNonzeroCounted(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 3 << 20, MaxItemSize: 1 << 20})
	value := strings.Repeat("B", 66560)
	for i := range 40 {
		s.Set(ModeSet, []byte(fmt.Sprintf("key%d", i)), 0, 0, []byte(value), 0)
	}
	var evicted, nonzero uint64
	for _, c := range s.Classes() {
		evicted += c.Evicted
		nonzero += c.EvictedNonzero
	}
	if nonzero != 0 {
		t.Fatalf("without exptime: evicted %d, evicted_nonzero %d; want 0", evicted, nonzero)
	}
	for i := range 50 {
		s.Set(ModeSet, []byte(fmt.Sprintf("key%d", i)), 0, 600, []byte(value), 0)
	}
	evicted, nonzero = 0, 0
	for _, c := range s.Classes() {
		evicted += c.Evicted
		nonzero += c.EvictedNonzero
	}
	if nonzero == 0 || nonzero > evicted {
		t.Fatalf("with exptime: evicted %d, evicted_nonzero %d", evicted, nonzero)
	}
}
