package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// -m is a real bound on item memory: the peak resident memory of the
// server process (VmHWM) stays within 1.05 × -m + 32 MB + the index when
// clients flood it with sets, pipeline gets of huge values without reading
// the replies, or leave hundreds of large sets half sent. (Connection
// buffers, each bounded, come on top with many clients: README,
// Architecture.) The index (a table of
// 8-byte slots per shard) lives outside -m, as memcached's hash table does;
// its size is read from `stats` hash_bytes after the run and counted twice,
// because a table that grows holds its old and new slots for a moment.

const mib = 1 << 20

func TestPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: starts servers of up to 1 GB")
	}
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is read from /proc")
	}
	cases := []struct {
		name  string
		m     int // -m in MiB
		flags []string
		drive func(t *testing.T, addr string)
	}{
		{"set flood -m 64", 64, nil, func(t *testing.T, addr string) { rssSetFlood(t, addr, 3*64*mib, 64*mib) }},
		{"set flood -m 1024", 1024, nil, func(t *testing.T, addr string) { rssSetFlood(t, addr, 2*1024*mib, 1024*mib) }},
		{"20 unread gets of 16 MiB", 1024, []string{"-I", "32m"}, rssUnreadGets},
		{"300 stalled partial 1 MB sets", 64, nil, rssStalledSets},
		{"4 values of 16 MiB", 1024, []string{"-I", "32m"}, rssFourBigValues},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachEngine(t, func(t *testing.T, tg target) {
				p := startServer(t, tg, append([]string{"-m", strconv.Itoa(c.m)}, c.flags...)...)
				c.drive(t, p.Addr())
				mem, err := p.Memory()
				if err != nil {
					t.Fatal(err)
				}
				index := 2 * rssStat(t, p.Addr(), "hash_bytes")
				bound := int64(1.05*float64(c.m*mib)) + 32*mib + index
				t.Logf("%s -m %d: peak RSS %.1f MB (bound %.1f MB, index %.1f MB; %d items, %.1f MB stored, %d evictions)",
					tg.name, c.m, float64(mem.Peak)/mib, float64(bound)/mib, float64(index)/mib,
					rssStat(t, p.Addr(), "curr_items"), float64(rssStat(t, p.Addr(), "bytes"))/mib, rssStat(t, p.Addr(), "evictions"))
				if mem.Peak > bound {
					t.Errorf("peak RSS %d MB over the bound %d MB", mem.Peak/mib, bound/mib)
				}
			})
		})
	}
}

// rssSetFlood stores total bytes through 4 connections pipelining noreply
// sets of mixed sizes (most over the 16 KiB read buffer), then waits for
// the server to catch up and checks that it filled its memory limit: its
// slab classes took all of -m's pages.
func rssSetFlood(t *testing.T, addr string, total, limit int) {
	defer func() {
		if b := rssStatOf(t, addr, "stats slabs", "total_malloced"); b < int64(limit) {
			t.Errorf("after the flood only %d MB of pages taken", b/mib)
		}
	}()
	const conns = 4
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := rssDial(t, addr)
			defer conn.Close()
			w := bufio.NewWriterSize(conn, 256<<10)
			sizes := []int{500, 40 << 10, 3000, 200 << 10}
			vals := make([]string, len(sizes))
			for i, n := range sizes {
				vals[i] = strings.Repeat("x", n)
			}
			for i, sent := 0, 0; sent < total/conns; i++ {
				v := vals[i%len(vals)]
				fmt.Fprintf(w, "set k%d:%d 0 0 %d noreply\r\n%s\r\n", c, i, len(v), v)
				sent += len(v)
			}
			rssRoundTrip(t, w, conn)
		}()
	}
	wg.Wait()
}

// rssRoundTrip flushes w and waits for a version reply: the server has
// handled everything sent before.
func rssRoundTrip(t *testing.T, w *bufio.Writer, conn net.Conn) {
	w.WriteString("version\r\n")
	if err := w.Flush(); err != nil {
		t.Error(err)
		return
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "VERSION") {
		t.Errorf("version: %q %v", line, err)
	}
}

// rssStoreValue sets key to n bytes through its own connection.
func rssStoreValue(t *testing.T, addr, key string, n int) {
	conn := rssDial(t, addr)
	defer conn.Close()
	w := bufio.NewWriterSize(conn, 1<<20)
	fmt.Fprintf(w, "set %s 0 0 %d\r\n", key, n)
	chunk := strings.Repeat("v", 1<<20)
	for left := n; left > 0; left -= min(left, len(chunk)) {
		w.WriteString(chunk[:min(left, len(chunk))])
	}
	w.WriteString("\r\n")
	w.Flush()
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	if line, err := bufio.NewReader(conn).ReadString('\n'); line != "STORED\r\n" {
		t.Fatalf("set %s: %q %v", key, line, err)
	}
}

// rssUnreadGets: one client pipelines 20 gets of a 16 MiB value and reads
// nothing; memcached holds about 1 MB for it.
func rssUnreadGets(t *testing.T, addr string) {
	rssStoreValue(t, addr, "big", 16*mib)
	conn := rssDial(t, addr)
	defer conn.Close()
	if _, err := io.WriteString(conn, strings.Repeat("get big\r\n", 20)); err != nil {
		t.Fatal(err)
	}
	rssQuiet(t, addr, "bytes_written") // the server writes until the socket is full
}

// rssQuiet waits until the server's counter stat (bytes_read, bytes_written)
// has stopped moving: the server has done all it will for clients that
// have stopped. Quiet is a second of polls each adding less than 64 KiB
// (a poll's own stats request and reply count too); it waits at most 30 s
// (a loaded machine), then the peak is measured anyway.
func rssQuiet(t *testing.T, addr, stat string) {
	t.Helper()
	const own = 64 << 10
	last, still := int64(-own-1), 0
	for deadline := time.Now().Add(30 * time.Second); still < 5 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		v := rssStat(t, addr, stat)
		if v-last < own {
			still++
		} else {
			last, still = v, 0
		}
	}
}

// rssStalledSets: 300 clients each send half of a 1 MB set and stop.
func rssStalledSets(t *testing.T, addr string) {
	half := strings.Repeat("s", 500_000)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 300 {
		c := rssDial(t, addr)
		conns = append(conns, c)
		if _, err := fmt.Fprintf(c, "set stalled%d 0 0 1000000\r\n%s", i, half); err != nil {
			t.Fatal(err)
		}
	}
	rssQuiet(t, addr, "bytes_read") // it has read what the 300 sent
	// The server still answers others.
	c := rssDial(t, addr)
	defer c.Close()
	rssRoundTrip(t, bufio.NewWriter(c), c)
}

// rssFourBigValues stores four 16 MiB values at once and reads them back.
func rssFourBigValues(t *testing.T, addr string) {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rssStoreValue(t, addr, fmt.Sprintf("big%d", i), 16*mib)
		}()
	}
	wg.Wait()
	conn := rssDial(t, addr)
	defer conn.Close()
	fmt.Fprintf(conn, "get big0 big1 big2 big3\r\n")
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReaderSize(conn, 64<<10)
	for i := range 4 {
		line, err := r.ReadString('\n')
		if want := fmt.Sprintf("VALUE big%d 0 %d\r\n", i, 16*mib); line != want {
			t.Fatalf("got %q %v, want %q", line, err, want)
		}
		if _, err := io.CopyN(io.Discard, r, 16*mib+2); err != nil {
			t.Fatal(err)
		}
	}
}

func rssDial(t *testing.T, addr string) net.Conn {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rssStat reads one `stats` value over a fresh connection.
func rssStat(t *testing.T, addr, name string) int64 {
	return rssStatOf(t, addr, "stats", name)
}

// rssStatOf reads one field of a stats command's reply ("stats" or
// "stats GROUP").
func rssStatOf(t *testing.T, addr, cmd, name string) int64 {
	c := rssDial(t, addr)
	defer c.Close()
	vals, err := testproc.Stats(c, strings.TrimSpace(strings.TrimPrefix(cmd, "stats")))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := vals[name]
	if !ok {
		t.Fatalf("%s: no %s", cmd, name)
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}
