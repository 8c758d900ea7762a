package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A large value goes out from the store's memory on the epoll and io_uring
// engines (no copy into the reply), pinned until the socket has taken it.
// TestLargeValuesToASlowReader pipelines gets of such values to a client
// that reads slowly through a small receive buffer, so that each is written
// in many pieces, while another client overwrites and deletes the same
// keys: every value read must be whole and one that was stored for its key.
// memcached, which sends its items the same way, passes the same test.
func TestLargeValuesToASlowReader(t *testing.T) {
	sizes := []int{16 << 10, 40000, 65536, 100000, 300000}
	const rounds, versions = 20, 20 // 10 MiB of replies: more than a socket's send buffer takes (4 MiB)
	forEachTarget(t, func(t *testing.T, tg target) {
		p := startServer(t, tg, "-m", "16")
		writer := dialRaw(t, p.Addr())
		for i, n := range sizes {
			writer.expect(setLine(i, 0, n), "STORED\r\n")
		}
		reader := dialSlow(t, p.Addr())
		keys := make([]string, len(sizes))
		for i := range sizes {
			keys[i] = "big" + strconv.Itoa(i)
		}
		get := "get " + strings.Join(keys, " ") + "\r\n"
		if _, err := io.WriteString(reader, strings.Repeat(get, rounds)); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(slowReader{reader})
		first, err := r.ReadString('\n') // the replies have begun: the rest wait in the server
		if err != nil || !strings.HasPrefix(first, "VALUE ") {
			t.Fatalf("first reply line %q: %v", first, err)
		}
		// The store turns over while the replies wait for the reader: every
		// key overwritten or deleted many times, then evicted by a flood,
		// all of it served before the reader reads on.
		{
			var w strings.Builder
			for v := 1; v <= versions; v++ {
				for i, n := range sizes {
					if (v+i)%5 == 0 {
						w.WriteString("delete " + keys[i] + " noreply\r\n")
					} else {
						w.WriteString(strings.Replace(setLine(i, v, n), "\r\n", " noreply\r\n", 1))
					}
				}
			}
			for i, n := range sizes { // and other keys past -m: every chunk of these sizes reused
				for j := range 24 << 20 / n {
					fmt.Fprintf(&w, "set flood%d_%d 0 0 %d noreply\r\n%s\r\n", i, j, n, strings.Repeat("F", n))
				}
			}
			w.WriteString("version\r\n")
			writer.send(w.String())
			if l := writer.line(); !strings.HasPrefix(l, "VERSION ") {
				t.Fatalf("writer: %q", l)
			}
		}
		hits := 0
		for round := range rounds {
			for {
				line := first
				if round > 0 || hits > 0 {
					line, err = r.ReadString('\n')
				}
				if err != nil {
					t.Fatalf("after %d values: %v", hits, err)
				}
				if line == "END\r\n" {
					break
				}
				f := strings.Fields(line)
				if len(f) != 4 || f[0] != "VALUE" {
					t.Fatalf("reply line %q", line)
				}
				n, _ := strconv.Atoi(f[3])
				data := make([]byte, n+2)
				if _, err := io.ReadFull(r, data); err != nil {
					t.Fatalf("value of %s: %v", f[1], err)
				}
				if err := checkVersion(f[1], string(data[:n]), sizes); err != nil || string(data[n:]) != "\r\n" {
					t.Fatalf("value of %s (%d bytes): %v", f[1], n, err)
				}
				hits++
			}
		}
		if hits == 0 {
			t.Fatal("no value was read: the test checked nothing")
		}
		if tg.engine == "epoll" || tg.engine == "uring" {
			refs := 0
			for name, v := range dialRaw(t, p.Addr()).stats("reactors") {
				if strings.HasSuffix(name, ":ref_sends") {
					n, _ := strconv.Atoi(v)
					refs += n
				}
			}
			// Up to 16 values a turn go by reference, the others are copied.
			if refs == 0 {
				t.Errorf("no value sent by reference (stats reactors ref_sends) of the %d read", hits)
			}
			t.Logf("%d values read, %d sent by reference", hits, refs)
		}
	})
}

// setLine is a set of the key big<i> to version v of its n-byte value.
func setLine(i, v, n int) string {
	return fmt.Sprintf("set big%d 0 0 %d\r\n%s\r\n", i, n, versionValue("big"+strconv.Itoa(i), v, n))
}

// versionValue is version v of key's n-byte value: a header naming both,
// then bytes that depend on v and their place.
func versionValue(key string, v, n int) string {
	b := []byte(fmt.Sprintf("%s|%d|", key, v))
	for i := len(b); i < n; i++ {
		b = append(b, byte('a'+(i*7+v)%26))
	}
	return string(b[:n])
}

// checkVersion reports whether value is, whole, a version of key's value.
func checkVersion(key, value string, sizes []int) error {
	parts := strings.SplitN(value, "|", 3)
	if len(parts) != 3 || parts[0] != key {
		return fmt.Errorf("header %.30q names another key", value)
	}
	v, err := strconv.Atoi(parts[1])
	if err != nil {
		return fmt.Errorf("header %.30q", value)
	}
	if value != versionValue(key, v, len(value)) {
		return fmt.Errorf("version %d torn or mixed", v)
	}
	i, _ := strconv.Atoi(strings.TrimPrefix(key, "big"))
	if i < 0 || i >= len(sizes) || len(value) != sizes[i] {
		return fmt.Errorf("%d bytes", len(value))
	}
	return nil
}

// dialSlow connects with a 4 KiB receive buffer, so that a large reply is
// written in many pieces.
func dialSlow(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// slowReader reads at most 4 KiB at a time, pausing before each read.
type slowReader struct{ c net.Conn }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(100 * time.Microsecond)
	return s.c.Read(p[:min(len(p), 4096)])
}
