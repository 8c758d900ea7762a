package protocol

import "github.com/gocached/gocached/internal/store"

// Large values sent by reference.
//
// A value of refMin bytes or more costs more to copy into the reply than
// anything else a get does: 64 KiB from memory that is not in cache took
// 8 of a get's 10 microseconds of user time, on top of the kernel's own
// copy into the socket. memcached hands the kernel the item's memory
// (iovecs, each item's reference count held until it is written); an
// engine that says it can (SendRefs) gets the same from a Session: a
// reply's bytes skip the value, and the Session notes where it belongs
// (RefSeg) with its bytes in the store (store.RefBytes, pinned by a
// store.ValueRef). After the Process call the engine takes the call's
// values (TakeRefs) and writes the reply with each value in its place,
// straight from the store's memory, up to MaxRefs of them with one
// system call; it reports them written (RefSent) before the next call.
// Values read from flash, chained values and every value of an engine
// that did not ask are copied as before.

// refMin is the smallest value sent by reference: below it a copy costs
// less than the pin (a map entry under the shard lock, taken and given
// back).
const refMin = 16 << 10

// MaxRefs bounds the values one Process call leaves to the engine (the
// iovecs of one write are twice as many, and one); the call copies any
// further ones.
const MaxRefs = 16

// RefSeg is a value an engine sends from the store's memory: Value, read
// only, goes before the reply's byte at offset At (in the reply Process
// returned; At is len(reply) for a value at its very end).
type RefSeg struct {
	At    int
	Value []byte
}

// refBatch holds the values of one Process call sent by reference, and
// their pins, until the engine has sent them (handed from TakeRefs to
// RefSent). Its slices are allocated at a connection's first such value
// and kept.
type refBatch struct {
	segs   []RefSeg
	pins   []store.ValueRef
	handed bool
}

func (b *refBatch) add(at int, value []byte, pin store.ValueRef) {
	if b.segs == nil {
		b.segs, b.pins = make([]RefSeg, 0, MaxRefs), make([]store.ValueRef, 0, MaxRefs)
	}
	b.segs = append(b.segs, RefSeg{At: at, Value: value})
	b.pins = append(b.pins, pin)
}

// dropFrom releases the values placed at or after offset at: the replies
// they belonged to were dropped.
func (b *refBatch) dropFrom(st *store.Store, at int) {
	for n := len(b.segs); n > 0 && b.segs[n-1].At >= at && !b.handed; n-- {
		st.ReleaseRef(b.pins[n-1])
		b.segs, b.pins = b.segs[:n-1], b.pins[:n-1]
	}
}

// byRef reports whether a value of n bytes is left to the engine.
func (s *Session) byRef(n int) bool {
	return s.conn.sendsRefs && n >= refMin && len(s.refs.segs) < MaxRefs && !s.refs.handed && s.env.ResumesPending
}

// pinsValue reports whether a value of n bytes goes out through a
// store.ValueRef: by reference, or in pieces (budget.go).
func (s *Session) pinsValue(n int) bool {
	return s.env.inPieces(n) || s.byRef(n)
}

// SendRefs tells the Session that its engine sends large values from the
// store's memory for the connection just opened. An engine that calls it
// must, after every Process call, take the call's values (TakeRefs) and
// write each in its place in the reply, and call RefSent once they are
// written, before it calls Process again.
func (s *Session) SendRefs() { s.conn.sendsRefs = true }

// TakeRefs returns the values the last Process call left to the engine to
// send, in the order of their offsets, or nil. The slice and the values'
// pins are the Session's until RefSent (or Reset).
func (s *Session) TakeRefs() []RefSeg {
	if len(s.refs.segs) == 0 {
		return nil
	}
	s.refs.handed = true
	return s.refs.segs
}

// RefSent reports that the values TakeRefs returned are written: their
// pins go, and the Session takes calls again.
func (s *Session) RefSent() { s.releaseRefs() }

// releaseRefs gives back every pin of the batch.
func (s *Session) releaseRefs() {
	b := &s.refs
	for i, pin := range b.pins {
		s.env.Store.ReleaseRef(pin)
		b.segs[i], b.pins[i] = RefSeg{}, store.ValueRef{}
	}
	b.segs, b.pins, b.handed = b.segs[:0], b.pins[:0], false
}
