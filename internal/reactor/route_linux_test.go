//go:build linux

package reactor

import (
	"sync/atomic"
	"testing"
)

// TestRouter checks the combined rule the epoll and io_uring engines share:
// unix connections go round-robin whoever accepted them and whatever NAPI ID
// they report, TCP ones follow their NAPI ID's owner, and an ID of 0 or one
// no reactor can own stays where it was accepted. Each table entry is one
// router's history, so the interleavings also show that neither half of the
// rule disturbs the other's state.
func TestRouter(t *testing.T) {
	type conn struct {
		self int
		unix bool
		id   uint32
		want int
	}
	tests := []struct {
		name     string
		reactors int
		conns    []conn
	}{
		{"unix deals in turn from the acceptor", 3, []conn{
			{0, true, 0, 0}, {0, true, 0, 1}, {0, true, 0, 2}, {0, true, 0, 0}}},
		{"unix ignores the accepting reactor and any NAPI ID", 2, []conn{
			{1, true, 7, 0}, {1, true, 7, 1}, {0, true, 9, 0}}},
		{"one reactor keeps every unix connection", 1, []conn{
			{0, true, 0, 0}, {0, true, 0, 0}}},
		{"tcp with a NAPI ID goes to its owner", 2, []conn{
			{1, false, 7, 1}, {0, false, 7, 1}, {0, false, 9, 0}, {1, false, 9, 0}}},
		{"tcp NAPI ID 0 stays where accepted", 2, []conn{
			{0, false, 0, 0}, {1, false, 0, 1}}},
		{"tcp unknown ID with every reactor owning one stays where accepted", 2, []conn{
			{0, false, 1, 0}, {0, false, 2, 1}, {1, false, 3, 1}, {0, false, 3, 0}}},
		{"unix and tcp interleaved keep their own state", 2, []conn{
			{0, true, 0, 0}, {1, false, 5, 1}, {0, true, 0, 1}, {0, false, 5, 1},
			{0, false, 0, 0}, {0, true, 0, 0}, {0, false, 6, 0}, {1, true, 0, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := make([]*atomic.Uint32, tc.reactors)
			for i := range ids {
				ids[i] = new(atomic.Uint32)
			}
			rt := NewRouter(ids)
			for i, c := range tc.conns {
				if got := rt.Route(c.self, c.unix, c.id); got != c.want {
					t.Errorf("conn %d: reactor %d accepted (unix %v, NAPI ID %d): routed to %d, want %d",
						i, c.self, c.unix, c.id, got, c.want)
				}
			}
		})
	}
}
