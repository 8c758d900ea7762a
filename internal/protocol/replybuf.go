package protocol

import (
	"slices"
	"sync"
)

// Reply buffers for large replies.
//
// A reply that outgrows the engine's small buffer (a value of tens of KiB
// or more, or a multiget's worth of them) used to grow by append: about
// twice the turn's output allocated in ever larger arrays, each dropped to
// the collector once sent. With item memory outside the Go heap the heap
// is a few MB, so that garbage started a GC cycle about once per large
// reply: 164 cycles for 100 sets and 100 gets of 1 MB, and 4.5 ms per get
// where memcached takes 0.6. Such a reply now moves once into a buffer of
// ReplyBufCap from a pool, and the engine gives the buffer back with
// RecycleReply once it is sent. A sync.Pool, because the collector empties
// it when large replies stop, so a burst of them leaves no lasting memory,
// and because it serves every engine's goroutines without a lock of ours.

// ReplyBufCap is the capacity of the largest pooled reply buffer: two
// turns' output budget, which covers a turn started while up to one budget
// of replies still waits to be sent (the engines stop reading past that
// backlog), and two pieces of overshoot. A reply that needs more grows by
// append.
const ReplyBufCap = 2*OutputBudget + 2*valueChunk

// replyClasses are the pooled buffers' capacities, smallest first: a reply
// takes the smallest that holds it, so a client stalled on a 20 KB reply
// pins 64 KiB, not ReplyBufCap.
var replyClasses = [...]int{64 << 10, 256 << 10, ReplyBufCap}

var replyBufs [len(replyClasses)]sync.Pool // of *[]byte, one pool per class

// replyRoom returns b, or b's bytes moved into a pooled buffer, with room
// for n more bytes. A pooled buffer the Session itself took earlier in this
// Process call (not the engine's, which the engine gives back) goes back
// to its pool when the reply moves out of it.
func (s *Session) replyRoom(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	need := len(b) + n
	for i, c := range replyClasses {
		if c < need || c <= cap(b) {
			continue
		}
		var nb []byte
		if p, ok := replyBufs[i].Get().(*[]byte); ok {
			nb = (*p)[:0]
		} else {
			nb = make([]byte, 0, c)
		}
		nb = append(nb, b...)
		if cap(b) > 0 && (cap(s.outIn) == 0 || &b[:1][0] != &s.outIn[:1][0]) {
			RecycleReply(b)
		}
		return nb
	}
	return slices.Grow(b, n)
}

// RecycleReply takes back a reply buffer once nothing reads from it any
// more (its bytes are sent or dropped). Buffers of other capacities than
// the pool's are left to the collector.
func RecycleReply(b []byte) {
	for i, c := range replyClasses {
		if cap(b) == c {
			b = b[:0]
			replyBufs[i].Put(&b)
			return
		}
	}
}
