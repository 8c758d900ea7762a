//go:build linux

package epoll

import (
	"testing"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"github.com/gocached/gocached/internal/reactor/rawloop"
	"golang.org/x/sys/unix"
)

// TestEpollOutDropsSentBytes: a client that reads slowly but never lets
// the backlog empty is held to about two turns of replies. The sent part of
// c.Out was kept until the backlog emptied, so each turn grew the buffer by
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
	core, err := rawloop.NewLoop(&rawloop.Group[connIO]{Name: "epoll", Acct: reactor.NewAccounting(0)}, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer core.CloseMailbox()
	r := &loop{Loop: core, epfd: epfd}
	core.SetIO(r)
	c := &conn{FD: fds[0], Sess: &enginetest.Fake{Stream: true}} // always another MiB of replies to give
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.FD)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, c.FD, &ev); err != nil {
		t.Fatal(err)
	}
	c.IO.interest = unix.EPOLLIN
	buf := make([]byte, 256<<10)
	for turn := 0; turn < 40; turn++ {
		r.Process(c) // queues c for another turn once, which this test never gives
		// The client reads most, never all, of what is pending.
		for pending := len(c.Out) - c.Sent; pending > 0; {
			n, err := unix.Read(fds[1], buf)
			if err != nil || n <= 0 {
				break
			}
			if !r.write(c) || len(c.Out)-c.Sent < protocol.OutputBudget/2 {
				break
			}
			pending = len(c.Out) - c.Sent
		}
		if c.Out == nil {
			t.Fatalf("turn %d: the backlog emptied; the test needs it never to", turn)
		}
		if cap(c.Out) > protocol.ReplyBufCap {
			t.Fatalf("turn %d: reply buffer of %d bytes for %d pending (%d sent kept)", turn, cap(c.Out), len(c.Out)-c.Sent, c.Sent)
		}
	}
}
