package enginetest

import (
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/sys/unix"
)

// nagleClient: a TCP client that leaves Nagle's algorithm on (as perl's
// IO::Socket clients of memcached's t/ suite do) holds back a small write
// until its previous one is acknowledged. When the server has no reply to
// carry that ACK — the rest of a value written in two pieces, the request
// after a noreply one — the engine must acknowledge at once
// (reactor.AckNow), or the client waits for the kernel's delayed-ACK
// timer (40 ms or more) on every such request.
func nagleClient(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	CheckNagleClient(t, c, c.NC.(*net.TCPConn))
}

// CheckNagleClient runs nagleClient's exchanges over c, whose TCP socket
// is tcp (c's own, or the one under its TLS), with Nagle's algorithm on:
// each read that leaves the client nothing to receive must be acknowledged
// at once, and a request answered with a reply (which carries the ACK)
// asks for nothing.
func CheckNagleClient(t *testing.T, c *Client, tcp *net.TCPConn) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the engines acknowledge at once with Linux's TCP_QUICKACK only")
	}
	if err := tcp.SetNoDelay(false); err != nil {
		t.Fatal(err)
	}
	acked := ackCounter(t, tcp)
	value := strings.Repeat("v", 20000)
	set := "set k 0 0 " + itoa(len(value)) + "\r\n" + value + "\r\n"

	c.Send(set[:16<<10]) // no reply yet: the rest waits for this piece's ACK
	WaitFor(t, "an immediate ACK of the first piece of a set", func() bool { return acked() >= 1 })
	c.Send(set[16<<10:])
	c.Expect("STORED\r\n")

	n := acked()
	c.Send("set q 0 0 " + itoa(len(value)) + " noreply\r\n" + value + "\r\n")
	WaitFor(t, "an immediate ACK of a noreply set", func() bool { return acked() > n })
	c.Send("mn\r\n")
	c.Expect("MN\r\n")

	// A reply carries the ACK: no extra system call for it. The second mn
	// is answered only after the first one's turn has ended.
	n = acked()
	c.Send("mn\r\n")
	c.Expect("MN\r\n")
	c.Send("mn\r\n")
	c.Expect("MN\r\n")
	if got := acked(); got != n {
		t.Errorf("%d immediate ACKs for requests answered with a reply, want none", got-n)
	}
}

// acks counts AckNow calls by the client address of the server's socket,
// so that engines under test side by side each see their own.
var acks struct {
	once sync.Once
	mu   sync.Mutex
	n    map[netip.AddrPort]int
}

// ackCounter returns a count of the AckNow calls on the server's side of
// the client socket tcp.
func ackCounter(t *testing.T, tcp *net.TCPConn) func() int {
	acks.once.Do(func() {
		acks.n = make(map[netip.AddrPort]int)
		reactor.ObserveAckNow(noteAck)
	})
	local := tcp.LocalAddr().(*net.TCPAddr).AddrPort()
	client := netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	t.Cleanup(func() {
		acks.mu.Lock()
		delete(acks.n, client)
		acks.mu.Unlock()
	})
	return func() int {
		acks.mu.Lock()
		defer acks.mu.Unlock()
		return acks.n[client]
	}
}

func noteAck(fd int) {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return
	}
	var peer netip.AddrPort
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		peer = netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *unix.SockaddrInet6:
		peer = netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port))
	default:
		return
	}
	acks.mu.Lock()
	acks.n[peer]++
	acks.mu.Unlock()
}
