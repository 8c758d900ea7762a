package reactor

import (
	"testing"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// TestListenPauseTime: time_in_listen_disabled_us counts the time at least
// one pause is open, once however many overlap, from the pauses that ended
// (as memcached adds a pause when accepting resumes); stats reset clears it.
func TestListenPauseTime(t *testing.T) {
	a := NewAccounting(10)
	fill := func() protocol.ServerStats {
		var s protocol.ServerStats
		a.Fill(&s)
		return s
	}
	a.ListenDisabled()
	a.ListenDisabled() // a second reactor pauses meanwhile
	time.Sleep(20 * time.Millisecond)
	if s := fill(); s.ListenDisabledNum != 2 || s.ListenDisabledUs != 0 {
		t.Fatalf("while paused: num %d, us %d; want 2, 0 (counted when it ends)", s.ListenDisabledNum, s.ListenDisabledUs)
	}
	a.ListenResumed()
	if s := fill(); s.ListenDisabledUs != 0 {
		t.Fatalf("one of two resumed: us %d, want 0", s.ListenDisabledUs)
	}
	a.ListenResumed()
	first := fill().ListenDisabledUs
	if first < 20_000 {
		t.Fatalf("after a pause of at least 20 ms: us %d", first)
	}
	a.ListenResumed() // unmatched: ignored
	if got := fill().ListenDisabledUs; got != first {
		t.Fatalf("an unmatched resume changed the time: %d, want %d", got, first)
	}
	a.Reset()
	if s := fill(); s.ListenDisabledUs != 0 || s.ListenDisabledNum != 0 {
		t.Fatalf("after reset: num %d, us %d", s.ListenDisabledNum, s.ListenDisabledUs)
	}
}
