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

// ReplyBufCap is the capacity of a pooled reply buffer: two turns' output
// budget, which covers a turn started while up to one budget of replies
// still waits to be sent (the engines stop reading past that backlog), and
// two pieces of overshoot. A reply that needs more grows by append.
const ReplyBufCap = 2*OutputBudget + 2*valueChunk

var replyBufs sync.Pool // of *[]byte with capacity ReplyBufCap

// replyRoom returns b, or b's bytes moved into a pooled buffer, with room
// for n more bytes.
func replyRoom(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	if len(b)+n > ReplyBufCap || cap(b) == ReplyBufCap {
		return slices.Grow(b, n)
	}
	var nb []byte
	if p, ok := replyBufs.Get().(*[]byte); ok {
		nb = (*p)[:0]
	} else {
		nb = make([]byte, 0, ReplyBufCap)
	}
	return append(nb, b...)
}

// RecycleReply takes back a reply buffer once nothing reads from it any
// more (its bytes are sent or dropped). Buffers the pool did not hand out
// are left to the collector.
func RecycleReply(b []byte) {
	if cap(b) != ReplyBufCap {
		return
	}
	b = b[:0]
	replyBufs.Put(&b)
}
