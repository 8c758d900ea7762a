package protocol

import "github.com/gocached/gocached/internal/store"

// Values received into the store.
//
// A storage command (set and its kin, ms, the binary SET family) whose data
// block is larger than recvAbove and has not fully arrived reserves its
// record in the store when its line is parsed (store.Reserve). From then on
// the Session consumes the value's bytes as they come, copying them into
// the reservation, so the engine's read buffer never grows to a value's
// size (Want stays within a read buffer plus a line) and a value in flight
// counts against -m, as memcached's allocated item does.
//
// On the value's end the command line, kept in recvState.line, is executed
// again with the reservation standing in for the data block: the same code
// path as a whole value answers it (committing), so the replies, noreply,
// counters and logs are the same. A data block that is already whole in the
// input is stored directly, as before: small values, and most large ones
// on a fast link, never take this path.
//
// A reservation the store could not make (no chunk to be had) is answered
// "SERVER_ERROR out of memory storing object" at the value's end, as
// memcached answers a store it cannot allocate, and its data is consumed.

// recvAbove is the data block size (value and "\r\n") above which a block
// that has not fully arrived is received into the store. Smaller blocks
// wait in the read buffer whole: it holds 16 KiB anyway, and reserving
// would cost a lock per read for nothing.
const recvAbove = 16 << 10

// recvState is a value being received into a reservation.
type recvState struct {
	active bool
	// binary: line holds a binary request's header, extras and key, and
	// the value has no "\r\n" after it.
	binary bool
	// committing is set while the line runs again at the value's end.
	committing bool
	got, vlen  int
	res        store.Reservation
	line       []byte // the command line (or binary request head), copied
}

func (r *recvState) reset() {
	*r = recvState{line: r.line[:0]}
	if cap(r.line) > 4<<10 {
		r.line = nil
	}
}

// receiving decides what a storage command does with its data block of
// total bytes (the value, plus "\r\n" unless binary) at the front of rest.
// ok: the block is here, data holds it (nil while committing a
// reservation, whose terminator, if any, rest holds). Else n > 0: that
// many bytes of rest went into a new reservation; n < 0: wait for -n more.
// head is the command line or binary request head, key the item's key.
func (s *Session) receiving(head, rest, key []byte, total int, binary bool) (data []byte, ok bool, n int) {
	if s.recv.committing {
		return nil, true, 0
	}
	if len(rest) >= total {
		return rest[:total], true, 0
	}
	if total <= recvAbove {
		return nil, false, -total
	}
	vlen := total
	if !binary {
		vlen -= 2
	}
	r := &s.recv
	r.active, r.binary, r.got, r.vlen = true, binary, 0, vlen
	r.line = append(r.line[:0], head...)
	r.res = s.env.Store.Reserve(key, vlen)
	return nil, false, s.recvData(rest)
}

// recvData copies the value bytes at the front of in into the reservation
// and returns how many it consumed. Once the reservation is lost they are
// only counted and dropped.
func (s *Session) recvData(in []byte) int {
	r := &s.recv
	k := min(len(in), r.vlen-r.got)
	if k > 0 {
		s.env.Store.FillReserved(&r.res, r.got, in[:k])
		r.got += k
	}
	return k
}

// continueRecv takes the next part of the value being received and, once
// it and its terminator are in, runs the command. It returns the bytes of
// in it consumed.
func (s *Session) continueRecv(in []byte) (int, Status) {
	r := &s.recv
	n := s.recvData(in)
	if r.got < r.vlen {
		return n, NeedMore
	}
	var term []byte
	if !r.binary {
		if len(in)-n < 2 {
			return n, NeedMore
		}
		term = in[n : n+2]
		n += 2
	}
	r.committing = true
	var st Status
	if r.binary {
		_, st = s.binaryRequest(r.line)
	} else {
		_, st = s.execute(r.line, term)
	}
	s.endRecv()
	return n, st
}

// endRecv ends a value received into the store: a reservation the command
// did not commit (bad data, a closed connection) gives its chunk back.
func (s *Session) endRecv() {
	if s.recv.active {
		s.env.Store.ReleaseReserved(&s.recv.res)
	}
	s.recv.reset()
}

// badTerminator reports whether a text data block lacks its "\r\n".
// A reservation that was lost is answered as out of memory whatever the
// terminator, as memcached answers a store it could not allocate and then
// swallows the data unread.
func (r *recvState) badTerminator(block []byte, vlen int) bool {
	if r.committing {
		return !r.res.Lost() && (block[0] != '\r' || block[1] != '\n')
	}
	return block[vlen] != '\r' || block[vlen+1] != '\n'
}

// setItem stores req, from a reservation while committing one.
func (s *Session) setItem(req store.SetRequest) (store.Result, uint64) {
	if s.recv.committing {
		return s.env.Store.CommitReserved(&s.recv.res, req)
	}
	return s.env.Store.SetItem(req)
}
