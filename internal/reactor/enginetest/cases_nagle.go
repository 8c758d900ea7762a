package enginetest

import (
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// delayedACKMin is Linux's shortest delayed-ACK timeout (TCP_DELACK_MIN).
// A client with Nagle's algorithm on that waits for the server's ACK
// before its next small write waits at least this long per request when
// the server lets the timer send the ACK: a median round trip of half of
// it cannot be a run of such waits, however loaded the machine, while a
// loopback round trip of a 20 KB value is far below it.
const delayedACKMin = 40 * time.Millisecond

// nagleClient: a TCP client that leaves Nagle's algorithm on (as perl's
// IO::Socket clients of memcached's t/ suite do) is answered without
// waiting on the server's delayed ACK, whether the request it holds back
// is the rest of a value written in two pieces or the request after a
// noreply one that has no reply to carry the ACK.
func nagleClient(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	CheckNagleClient(t, c, c.NC.(*net.TCPConn))
}

// CheckNagleClient runs nagleClient's exchanges over c, whose TCP socket
// is tcp (c's own, or the one under its TLS): it turns Nagle's algorithm
// on there, then fails unless the median round trip of each kind of
// exchange is under half of delayedACKMin.
func CheckNagleClient(t *testing.T, c *Client, tcp *net.TCPConn) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the engines acknowledge at once with Linux's TCP_QUICKACK only")
	}
	if err := tcp.SetNoDelay(false); err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("v", 20000)
	set := "set k 0 0 " + itoa(len(value)) + "\r\n" + value + "\r\n"
	exchanges := []struct {
		name string
		run  func()
	}{
		{"a set written in two pieces", func() {
			c.Send(set[:16<<10])
			c.Send(set[16<<10:]) // held by Nagle until the first piece is acknowledged
			c.Expect("STORED\r\n")
		}},
		{"a noreply set, then mn", func() {
			c.Send("set q 0 0 " + itoa(len(value)) + " noreply\r\n" + value + "\r\n")
			c.Send("mn\r\n") // held by Nagle until the set is acknowledged
			c.Expect("MN\r\n")
		}},
	}
	const rounds = 9
	for _, ex := range exchanges {
		took := make([]time.Duration, rounds)
		for i := range took {
			start := time.Now()
			ex.run()
			took[i] = time.Since(start)
		}
		slices.Sort(took)
		if median := took[rounds/2]; median >= delayedACKMin/2 {
			t.Errorf("%s: median round trip %v, at least half the delayed-ACK timeout (%v): the client waits for the ACK; all: %v",
				ex.name, median, delayedACKMin, took)
		}
	}
}
