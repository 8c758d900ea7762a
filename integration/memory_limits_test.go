package integration

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestMaxItemSize: -I raises and lowers the largest storable value, and a
// rejected value's data is swallowed so the connection stays in sync.
func TestMaxItemSize(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		for _, c := range []struct {
			flag     string
			fits     int
			tooLarge int
		}{
			{"1m", 1000 * 1000, 1<<20 + 1},
			{"2m", 2000 * 1000, 2<<20 + 1},
			{"512k", 500 * 1000, 512<<10 + 1},
		} {
			t.Run(c.flag, func(t *testing.T) {
				srv := startServer(t, tg, "-I", c.flag)
				conn := dialRaw(t, srv.Addr())
				conn.expect(set("set", "fits", 0, 0, strings.Repeat("f", c.fits)), "STORED\r\n")
				conn.expect(set("set", "big", 0, 0, strings.Repeat("b", c.tooLarge)), "SERVER_ERROR object too large for cache\r\n")
				conn.expect("get big\r\n", "END\r\n")
				conn.expect("get fits\r\n", fmt.Sprintf("VALUE fits 0 %d\r\n", c.fits))
				if got, err := conn.readUntil("END\r\n", 10*time.Second); err != nil || len(got) != c.fits+len("\r\nEND\r\n") {
					t.Fatalf("get fits: %d bytes (%v), want %d", len(got), err, c.fits+7)
				}
			})
		}
	})
}

// TestMemoryLimit: under -m, new items evict old ones; with -M they are
// refused with memcached's error instead and nothing is evicted.
func TestMemoryLimit(t *testing.T) {
	const megs, valueSize, count = 4, 100 << 10, 200 // 20 MB offered to a 4 MB cache
	value := strings.Repeat("m", valueSize)
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		t.Run("evict", func(t *testing.T) {
			srv := startServer(t, tg, "-m", strconv.Itoa(megs))
			c := dialRaw(t, srv.Addr())
			for i := range count {
				c.expect(set("set", fmt.Sprintf("k%d", i), 0, 0, value), "STORED\r\n")
			}
			c.expect("get k0\r\n", "END\r\n")
			c.expect(fmt.Sprintf("get k%d\r\n", count-1), fmt.Sprintf("VALUE k%d 0 %d\r\n", count-1, valueSize))
			if _, err := c.readUntil("END\r\n", 5*time.Second); err != nil {
				t.Fatal(err)
			}
			st := c.stats("")
			if n, _ := strconv.Atoi(st["evictions"]); n == 0 {
				t.Fatalf("stats evictions %q after offering %d MB to -m %d", st["evictions"], count*valueSize>>20, megs)
			}
			if n, _ := strconv.Atoi(st["curr_items"]); n*valueSize > 2*megs<<20 {
				t.Fatalf("curr_items %d of %d bytes exceeds -m %d", n, valueSize, megs)
			}
		})
		t.Run("no-evictions", func(t *testing.T) {
			srv := startServer(t, tg, "-m", strconv.Itoa(megs), "-M")
			c := dialRaw(t, srv.Addr())
			stored := 0
			for ; stored < count; stored++ {
				reply := c.roundTrip(set("set", fmt.Sprintf("k%d", stored), 0, 0, value))
				if reply == "SERVER_ERROR out of memory storing object\r\n" {
					break
				}
				if reply != "STORED\r\n" {
					t.Fatalf("set k%d: %q", stored, reply)
				}
			}
			if stored == count || stored == 0 {
				t.Fatalf("-M -m %d: %d of %d 100 KB sets stored, want an out of memory error after some", megs, stored, count)
			}
			for i := range stored {
				c.expect(fmt.Sprintf("get k%d\r\n", i), fmt.Sprintf("VALUE k%d 0 %d\r\n", i, valueSize))
				if _, err := c.readUntil("END\r\n", 5*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			if st := c.stats(""); st["evictions"] != "0" {
				t.Fatalf("-M: stats evictions %q, want 0", st["evictions"])
			}
			c.expect(set("set", "small", 0, 0, "x"), "STORED\r\n") // other sizes may still fit
		})
	})
}

// vmRSS is the resident set size of pid in bytes.
func vmRSS(t testing.TB, pid int) int64 {
	t.Helper()
	m, err := testproc.ReadMemory(pid)
	if err != nil {
		t.Fatal(err)
	}
	return m.Current
}

// TestBackpressure: a client pipelines 20k gets of a 100 KB value (2 GB of
// replies) and never reads. The server must stop reading it rather than
// buffer the replies: RSS stays bounded and another client keeps being
// served meanwhile.
func TestBackpressure(t *testing.T) {
	const gets, valueSize, rssLimit = 20000, 100 << 10, 512 << 20
	forEachTarget(t, func(t *testing.T, tg target) {
		srv := startServer(t, tg)
		other := dialRaw(t, srv.Addr())
		other.expect(set("set", "big", 0, 0, strings.Repeat("b", valueSize)), "STORED\r\n")
		base := vmRSS(t, srv.Pid())

		stuffer, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		stuffer.(*net.TCPConn).SetReadBuffer(4 << 10) // keep the client side small too
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			stuffer.SetWriteDeadline(time.Now().Add(20 * time.Second))
			req := []byte(strings.Repeat("get big\r\n", 100))
			for i := 0; i < gets/100; i++ {
				if _, err := stuffer.Write(req); err != nil {
					return // blocked until the deadline or closed: expected once the server stops reading
				}
			}
		}()

		peak := base
		deadline := time.Now().Add(5 * time.Second)
		served := 0
		for time.Now().Before(deadline) {
			other.expect(set("set", "small", 0, 0, strconv.Itoa(served)), "STORED\r\n")
			other.expect("get small\r\n", fmt.Sprintf("VALUE small 0 %d\r\n", len(strconv.Itoa(served))))
			if _, err := other.readUntil("END\r\n", 5*time.Second); err != nil {
				t.Fatalf("other client after %d round trips: %v", served, err)
			}
			served++
			peak = max(peak, vmRSS(t, srv.Pid()))
			time.Sleep(5 * time.Millisecond)
		}
		stuffer.Close()
		wg.Wait()
		peak = max(peak, vmRSS(t, srv.Pid()))
		t.Logf("RSS %d MiB before, peak %d MiB while stuffed; %d round trips for the other client", base>>20, peak>>20, served)
		if peak > rssLimit {
			t.Fatalf("RSS peaked at %d MiB, want < %d MiB", peak>>20, rssLimit>>20)
		}
		if served < 10 {
			t.Fatalf("other client served only %d times in 5 s", served)
		}
		other.expect("get big\r\n", fmt.Sprintf("VALUE big 0 %d\r\n", valueSize))
	})
}
