//go:build linux

package reactor

import "sync/atomic"

// Router is the reactor engines' one rule for which reactor serves an
// accepted connection. The epoll and io_uring engines share it so that a
// connection lands on the same reactor whichever engine accepted it:
//
//   - the -s (AF_UNIX) listener's connections are dealt out in turn
//     (UnixSpreader): one reactor accepts them all, and a unix socket has no
//     NAPI to follow;
//   - TCP connections go to the reactor that owns their SO_INCOMING_NAPI_ID
//     (NAPIRouter), and stay with the accepting reactor when the ID is 0 or
//     no reactor can own it.
//
// It is consulted once per accepted connection, from any reactor.
type Router struct {
	napi     *NAPIRouter
	unix     UnixSpreader
	reactors int
}

// NewRouter builds the Router of len(ids) reactors; ids[i] is reactor i's
// NAPI ID, which the router sets as it learns the mapping (see NAPIRouter).
func NewRouter(ids []*atomic.Uint32) *Router {
	return &Router{napi: NewNAPIRouter(ids), reactors: len(ids)}
}

// Route returns the reactor that must serve a connection that reactor self
// accepted on a unix listener (unixListener) or a TCP one with NAPI ID
// napiID.
func (rt *Router) Route(self int, unixListener bool, napiID uint32) int {
	if unixListener {
		return rt.unix.Next(rt.reactors)
	}
	return rt.napi.Route(self, napiID)
}
