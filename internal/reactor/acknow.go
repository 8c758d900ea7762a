package reactor

import "sync/atomic"

// AckWanted reports whether a read's turn should acknowledge the client's
// bytes at once (AckNow): the connection is TCP, the turn read something
// (received is what it read or holds unconsumed), and it sends no reply
// that would carry the ACK (sent is how many reply bytes it produced).
// Whether the client waits on that ACK cannot be seen from here, so every
// such turn asks: one system call on a turn that sends nothing, which a
// partial request or a noreply batch costs anyway in reads.
func AckWanted(tcp bool, received, sent int) bool {
	return tcp && received > 0 && sent == 0
}

// ackObserver, when set, is told of every AckNow (ObserveAckNow).
var ackObserver atomic.Pointer[func(fd int)]

// ObserveAckNow has fn called with the descriptor of every AckNow from now
// on: tests see which connections an engine acknowledged at once, where
// the kernel's effect (an ACK 40 ms sooner) could only be timed.
func ObserveAckNow(fn func(fd int)) { ackObserver.Store(&fn) }
