//go:build linux

package reactor

import "golang.org/x/sys/unix"

// AckNow acknowledges at once what the TCP socket fd has received, instead
// of leaving the ACK to the kernel's delayed-ACK timer (40 ms or more).
// Engines call it after a read that sends the client nothing (see
// AckWanted). A client that leaves Nagle's algorithm on (TCP_NODELAY unset,
// as perl's IO::Socket and many simple clients do) holds back a small
// write until its previous one is acknowledged; when the server has no
// reply to carry the ACK (the rest of a value written in two pieces, the
// request after a noreply one) the client would wait for that timer on
// every such request. TCP_QUICKACK sends the pending ACK now; it does not
// stay set (the kernel goes back to delaying ACKs once replies flow), so it
// is asked for each time. Errors are ignored: the ACK then only comes late.
func AckNow(fd int) {
	if f := ackObserver.Load(); f != nil {
		(*f)(fd)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
}
