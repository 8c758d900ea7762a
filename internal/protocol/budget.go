package protocol

import (
	"github.com/gocached/gocached/internal/store"
)

// Output flow control. With Env.ResumesPending the engine sends what one
// Process call produced before calling it again, so bounding what a call
// produces bounds the reply memory of a connection, whatever its client
// asks for and however slowly it reads: 20 pipelined gets of a 16 MiB value
// cost one budget, not 320 MiB.
//
// A call stops starting requests once its output reached OutputBudget and
// reports Pending; a paused multiget resumes between keys; a value larger
// than valueChunk is not copied whole but sent from the store a piece at a
// time through a store.ValueRef, as much per call as the budget leaves.
// Without ResumesPending replies are whole, as before.

// OutputBudget is how many reply bytes one Process call produces before it
// stops starting requests (with Env.ResumesPending), and before a multiget
// pauses between keys (always).
const OutputBudget = 1 << 20

// valueChunk is the largest value copied whole into a reply, and the most
// copied per hold of the shard lock when a larger one goes out in pieces.
// 64 KiB keeps a lock hold to a few microseconds and a reply's overshoot
// past the budget small, while values up to it (nearly all of them) keep
// the one-lock, one-copy path; above it the extra lock per 64 KiB copied
// costs well under 1%.
const valueChunk = 64 << 10

// sendState is a value being sent in pieces: ref names it in the store,
// off is how much of it is already in the output, and trailer says whether
// "\r\n" follows it (text and meta replies; binary ones end with it).
type sendState struct {
	active  bool
	trailer bool
	off     int
	ref     store.ValueRef
}

// overBudget reports whether this call's output reached the budget, which
// only an engine that resumes pending Sessions is held to.
func (s *Session) overBudget() bool {
	return s.env.ResumesPending && len(s.out)-s.outStart >= OutputBudget
}

// paused is the status of a call that stopped with work left for later:
// with ResumesPending, Pending brings the engine back and no conn_yield is
// counted; otherwise Yield asks for another call.
func (e *Env) paused() Status {
	if e.ResumesPending {
		return NeedMore
	}
	return Yield
}

// inPieces reports whether a value of n bytes is sent in pieces: larger
// than valueChunk, to an engine that resumes pending Sessions.
func (e *Env) inPieces(n int) bool { return n > valueChunk && e.ResumesPending }

// startSend appends the first piece of a value sent in pieces, named by
// ref, and leaves the rest (and "\r\n" when trailer is set) to
// continueSend. It runs with the item's shard locked.
func (s *Session) startSend(b, value []byte, ref store.ValueRef, trailer bool) []byte {
	return s.startSendHead(b, value, len(value), ref, trailer)
}

// startSendHead is startSend for a value of n bytes of which head, its
// start, lies in one piece (a chained item's head chunk): at most head is
// sent at once, the rest through ref.
func (s *Session) startSendHead(b, head []byte, n int, ref store.ValueRef, trailer bool) []byte {
	if s.byRef(n) {
		if value := s.env.Store.RefBytes(ref); len(value) == n {
			s.refs.add(len(b), value, ref)
			if trailer {
				b = append(b, crlf...)
			}
			return b
		}
	}
	k := max(0, min(valueChunk, OutputBudget-(len(b)-s.outStart), len(head)))
	s.send = sendState{active: true, trailer: trailer, off: k, ref: ref}
	// Room for this turn's share of the value at once, so that a large
	// one takes the pooled buffer that holds it without moving twice.
	share := min(n, max(k, OutputBudget-(len(b)-s.outStart))) + len(crlf)
	return append(s.replyRoom(b, share), head[:k]...)
}

// continueSend copies the rest of a value being sent, a piece per lock
// hold, until it is done or the budget is spent. If the store no longer
// holds the value's bytes (which its pin prevents: a bug), it returns
// Close: the reply cannot be completed, and a cut connection is the only
// way to tell the client, as no bytes may be sent in place of the
// value's; store.Stats.RefsLost counts these.
func (s *Session) continueSend() Status {
	snd := &s.send
	for n := snd.ref.Len(); snd.off < n; {
		room := OutputBudget - (len(s.out) - s.outStart)
		if room <= 0 {
			return NeedMore
		}
		k := min(room, valueChunk, n-snd.off)
		s.out = s.replyRoom(s.out, k+len(crlf))
		at := len(s.out)
		if !s.env.Store.CopyValue(snd.ref, snd.off, s.out[at:at+k]) {
			s.endSend()
			return Close
		}
		s.out = s.out[:at+k]
		snd.off += k
	}
	if snd.trailer {
		s.out = append(s.out, crlf...)
	}
	s.endSend()
	return NeedMore
}

// endSend ends a value sent in pieces, releasing the store's pin on it.
func (s *Session) endSend() {
	if s.send.active {
		s.env.Store.ReleaseRef(s.send.ref)
	}
	s.send = sendState{}
}
