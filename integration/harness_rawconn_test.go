package integration

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// rawConn is a plain text-protocol connection for tests that need exact bytes.
type rawConn struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, conn: c, r: bufio.NewReader(c)}
}

// send writes s in full.
func (c *rawConn) send(s string) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write %q: %v", abbreviate(s), err)
	}
}

// line reads one reply line including its "\r\n".
func (c *rawConn) line() string {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read reply line: %v (got %q)", err, l)
	}
	return l
}

// roundTrip sends req and reads one reply line.
func (c *rawConn) roundTrip(req string) string {
	c.t.Helper()
	c.send(req)
	return c.line()
}

// expect sends req and checks the reply lines that follow, in order.
func (c *rawConn) expect(req string, want ...string) {
	c.t.Helper()
	c.send(req)
	for _, w := range want {
		if got := c.line(); got != w {
			c.t.Fatalf("after %q: got %q, want %q", abbreviate(req), got, w)
		}
	}
}

// readUntil reads until the accumulated reply ends with suffix.
func (c *rawConn) readUntil(suffix string, limit time.Duration) (string, error) {
	c.conn.SetReadDeadline(time.Now().Add(limit))
	var buf bytes.Buffer
	chunk := make([]byte, 64<<10)
	for !bytes.HasSuffix(buf.Bytes(), []byte(suffix)) {
		n, err := c.r.Read(chunk)
		buf.Write(chunk[:n])
		if err != nil {
			return buf.String(), err
		}
	}
	return buf.String(), nil
}

// expectClosed checks that the server closes the connection (EOF or reset)
// after sending nothing more than want.
func (c *rawConn) expectClosed(want string) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(c.r)
	if err != nil && !isReset(err) {
		c.t.Fatalf("waiting for close: %v (got %q)", err, got)
	}
	if string(got) != want {
		c.t.Fatalf("before close: got %q, want %q", got, want)
	}
}

func isReset(err error) bool {
	return err != nil && (errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection reset"))
}

// stats reads a "stats [arg]" reply into a map.
func (c *rawConn) stats(arg string) map[string]string {
	c.t.Helper()
	_, vals := c.statsInOrder(arg)
	return vals
}

// statsInOrder sends "stats [arg]" and reads the reply (testproc.ReadStats):
// the names in the server's order and the values by name.
func (c *rawConn) statsInOrder(arg string) (names []string, vals map[string]string) {
	c.t.Helper()
	req := "stats\r\n"
	if arg != "" {
		req = "stats " + arg + "\r\n"
	}
	c.send(req)
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	names, vals, err := testproc.ReadStats(c.r)
	if err != nil {
		c.t.Fatalf("stats %s: %v", arg, err)
	}
	return names, vals
}

func abbreviate(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%s...(%d bytes)", s[:100], len(s))
	}
	return s
}
