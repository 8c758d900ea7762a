package integration

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// TestListenerProtocolPrefixes: memcached 1.6's "-l proto[ascii]:addr"
// and "proto[binary]:addr" fix the protocol of one listener whatever -B
// says (and a "tag[...]:" after it is accepted). On the ascii listener a
// 0x80 byte is text, on the binary one a text line closes the connection;
// every engine must serve both as memcached does.
func TestListenerProtocolPrefixes(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		asciiPort, err := testproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		binPort, err := testproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		list := fmt.Sprintf("proto[ascii]:tag[a]:127.0.0.1:%d,proto[binary]:127.0.0.1:%d", asciiPort, binPort)
		sp := spec(t, tg, "-l", list, "-p", fmt.Sprint(asciiPort), "-U", "0")
		sp.Addr = fmt.Sprintf("127.0.0.1:%d", asciiPort)
		startAt(t, sp)

		// ascii: the binary magic and a NOOP opcode ('\n') are a text line,
		// too short to be a command (memcached 1.6.40's parser refuses a
		// line under 4 bytes as a bad command line).
		c := dialT(t, asciiPort)
		c.Write([]byte{0x80, 0x0a})
		c.Write([]byte("version\r\n"))
		r := bufio.NewReader(c)
		if l, _ := r.ReadString('\n'); l != "CLIENT_ERROR bad command line format\r\n" {
			t.Errorf("ascii listener, binary magic: %q, want CLIENT_ERROR bad command line format", l)
		}
		if l, _ := r.ReadString('\n'); !strings.HasPrefix(l, "VERSION ") {
			t.Errorf("ascii listener, version: %q", l)
		}

		// binary: a binary VERSION request is answered; a text line closes.
		b := dialT(t, binPort)
		req := make([]byte, 24)
		req[0], req[1] = 0x80, 0x0b
		b.Write(req)
		hdr := make([]byte, 24)
		if _, err := io.ReadFull(b, hdr); err != nil || hdr[0] != 0x81 || hdr[1] != 0x0b || hdr[6] != 0 || hdr[7] != 0 {
			t.Errorf("binary listener, VERSION: % x, %v", hdr, err)
		}
		body := make([]byte, int(hdr[8])<<24|int(hdr[9])<<16|int(hdr[10])<<8|int(hdr[11]))
		io.ReadFull(b, body)
		b.Write([]byte(strings.Repeat("version\r\n", 3))) // a header's worth: 24 bytes
		b.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := b.Read(make([]byte, 64)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("binary listener, text line: read %d bytes, %v; want the connection closed", n, err)
		}
	})
}

func dialT(t *testing.T, port int) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}
