package integration

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMemoryReturnedAfterABurst: clients that pipeline gets of a large
// value and stop reading make the server buffer replies (each up to its
// connection's limit, some 2 MB); once they leave, that memory is garbage, and the
// server hands it back to the OS within a few of its 10 s periods rather
// than keeping it (Go's own scavenger would take minutes). The returner
// sleeps until a collection cycle while the heap is small (memreturn.go),
// so this also holds it to waking for the burst. The returner is the same
// for every engine: the default one is enough, beside the other tests.
// The value is under 16 KiB: a larger one goes out from the store's own
// memory (protocol/byref.go), and a client that does not read it holds a
// pin on it, no reply buffer.
func TestMemoryReturnedAfterABurst(t *testing.T) {
	t.Parallel()
	const clients, valueSize = 160, 15 << 10
	srv := startServer(t, target{name: "epoll", engine: "epoll"})
	c := dialRaw(t, srv.Addr())
	c.expect(set("set", "big", 0, 0, strings.Repeat("b", valueSize)), "STORED\r\n")
	time.Sleep(2 * time.Second) // past the start's own garbage: a baseline at rest
	base := vmRSS(t, srv.Pid())

	var wg sync.WaitGroup
	conns := make([]net.Conn, clients)
	req := []byte(strings.Repeat("get big\r\n", 100))
	for i := range conns {
		conn, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conn.(*net.TCPConn).SetReadBuffer(4 << 10)
		conns[i] = conn
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			for range 50 {
				if _, err := conn.Write(req); err != nil {
					return // the server stopped reading: its buffers are full
				}
			}
		}()
	}
	peak := base
	for deadline := time.Now().Add(20 * time.Second); peak < base+192<<20 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		peak = max(peak, vmRSS(t, srv.Pid()))
	}
	for _, conn := range conns {
		conn.Close()
	}
	wg.Wait()
	if peak < base+192<<20 {
		t.Fatalf("the burst took RSS from %d to only %d MiB in 20 s: the test's premise (replies buffered per connection) no longer holds", base>>20, peak>>20)
	}
	if v := c.roundTrip("version\r\n"); !strings.HasPrefix(v, "VERSION ") {
		t.Fatalf("after the burst: %q", v)
	}
	var rss int64
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if rss = vmRSS(t, srv.Pid()); rss < base+96<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RSS %d MiB a minute after the burst (at rest %d, peak %d)", rss>>20, base>>20, peak>>20)
		}
	}
	t.Logf("RSS %d MiB at rest, %d at the burst's peak, %d after", base>>20, peak>>20, rss>>20)
}
