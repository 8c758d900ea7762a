package protocol

// Large values sent by reference.
//
// A value of refMin bytes or more costs more to copy into the reply than
// anything else a get does: 64 KiB from memory that is not in cache took
// 8 of a get's 10 microseconds of user time, on top of the kernel's own
// copy into the socket. memcached hands the kernel the item's memory
// (an iovec, the item's reference count held until it is written); an
// engine that says it can (SendRefs) gets the same from a Session: the
// reply's bytes stop before the value, and the value's bytes in the store
// (store.RefBytes, pinned by a store.ValueRef) go out next, straight from
// the store's memory. The Session goes on, trailer first, once the engine
// reports them sent. Values read from flash, chained values and every
// value of an engine that did not ask are copied as before.

// refMin is the smallest value sent by reference: below it a copy costs
// less than the pin (a map entry under the shard lock, taken and given
// back) and the extra turn of the connection.
const refMin = 16 << 10

// pinsValue reports whether a value of n bytes goes out through a
// store.ValueRef: by reference, or in pieces (budget.go).
func (s *Session) pinsValue(n int) bool {
	return s.env.inPieces(n) || s.conn.sendsRefs && n >= refMin && s.env.ResumesPending
}

// SendRefs tells the Session that its engine sends a large value from the
// store's memory (TakeRef, RefSent) for the connection just opened. An
// engine that calls it must, after every Process call, take the value
// (TakeRef) and write its bytes after the reply's before writing anything
// the next Process call appends, and call RefSent once they are written.
func (s *Session) SendRefs() { s.conn.sendsRefs = true }

// TakeRef returns the bytes of the value the last Process call left to the
// engine to send, after the reply bytes it returned, and the bytes that
// follow it (tail, constant: its "\r\n", with the line's END when it was
// the last key), or nil. The value lies in the store's memory, read only,
// and stays as it is until the Session releases its pin (after RefSent,
// or at Reset). Handing the tail with it lets a get of one large value go
// out in one write, as memcached's does.
func (s *Session) TakeRef() (value, tail []byte) {
	value, tail = s.send.ext, s.send.tail
	if value != nil {
		s.send.ext, s.send.tail, s.send.handed = nil, nil, true
	}
	return value, tail
}

// The tails TakeRef hands out: read only, shared by every Session.
var (
	tailCRLF = []byte(crlf)
	tailEnd  = []byte(crlf + rEnd)
)

// handEnd adds the line's END to the tail of a value left to the engine
// (TakeRef) when it was the line's last key (keys[at:] holds no other),
// so that serveKeys, resumed, does not append it.
func (s *Session) handEnd(keys []byte, at int) {
	if s.send.ext == nil || len(s.send.tail) != len(crlf) {
		return
	}
	if ks, _ := nextToken(keys, at); ks == len(keys) {
		s.send.tail, s.get.endHanded = tailEnd, true
	}
}

// RefSent reports that the bytes TakeRef returned are written: Pending
// holds again, and the next Process call finishes the reply.
func (s *Session) RefSent() { s.send.handed = false }
