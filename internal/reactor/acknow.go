package reactor

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
