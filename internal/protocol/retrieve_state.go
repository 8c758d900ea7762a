package protocol

import "github.com/gocached/gocached/internal/store"

// getState is the retrieval (get, gets, gat, gats) being answered. key
// points into the engine's input only during a Process call.
type getState struct {
	// key is the key being looked up, which emitFn writes into its VALUE
	// line, with the CAS when withCAS (gets, gats).
	key     []byte
	withCAS bool
	// emitFn is the store's callback, bound once so that calls do not
	// allocate.
	emitFn func(value []byte, m store.Meta)
	// hitLen and hitFlags are the length and flags of the last value
	// found, from which the logs name its slab class.
	hitLen   int
	hitFlags uint32
	// multiget is a multiget a call left unfinished: paused between keys
	// for want of output budget, or a line over the multiget bound served
	// as it arrives. The rest of its keys is at the front of the
	// unconsumed input.
	multiget multigetState
}

// bind sets the store callback to s's method; a method value built per
// request would allocate.
func (g *getState) bind(s *Session) { g.emitFn = s.emitValue }

// endCall drops the reference into the engine's input at the end of a
// Process call, so that the engine may reuse or free its buffer.
func (g *getState) endCall() { g.key = nil }

// reset prepares the state for a new connection: no multiget carries over.
func (g *getState) reset() {
	g.multiget = multigetState{}
	g.endCall()
}
