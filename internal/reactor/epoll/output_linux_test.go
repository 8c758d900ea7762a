//go:build linux

package epoll

import (
	"testing"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"golang.org/x/sys/unix"
)

// TestEpollOutDropsSentBytes: a client that reads slowly but never lets
// the backlog empty is held to about two turns of replies. The sent part of
// c.out was kept until the backlog emptied, so each turn grew the buffer by
// a turn's output, without bound.
func TestEpollOutDropsSentBytes(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(epfd)
	r := &loop{epfd: epfd, cpu: -1}
	c := &conn{fd: fds[0], sess: &enginetest.Fake{Stream: true}} // always another MiB of replies to give
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		t.Fatal(err)
	}
	c.interest = unix.EPOLLIN
	buf := make([]byte, 256<<10)
	for turn := 0; turn < 40; turn++ {
		r.process(c)
		r.yields = r.yields[:0]
		c.queued = false
		// The client reads most, never all, of what is pending.
		for pending := len(c.out) - c.woff; pending > 0; {
			n, err := unix.Read(fds[1], buf)
			if err != nil || n <= 0 {
				break
			}
			if !r.write(c) || len(c.out)-c.woff < protocol.OutputBudget/2 {
				break
			}
			pending = len(c.out) - c.woff
		}
		if c.out == nil {
			t.Fatalf("turn %d: the backlog emptied; the test needs it never to", turn)
		}
		if cap(c.out) > protocol.ReplyBufCap {
			t.Fatalf("turn %d: reply buffer of %d bytes for %d pending (%d sent kept)", turn, cap(c.out), len(c.out)-c.woff, c.woff)
		}
	}
}
