package reactor_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/reactor"
)

// TestUDPMessages checks how replies are cut into messages, as Debian's
// memcached 1.6.18 cuts them: a response object per request and per key
// of a multiget, each its own message, an empty object a bare header with
// a datagram count of 0 unless it follows a sent one.
func TestUDPMessages(t *testing.T) {
	bin := func(op byte, key string) string { // a binary request with a key and no extras or value
		h := []byte{0x80, op, 0, byte(len(key)), 0, 0, 0, 0, 0, 0, 0, byte(len(key))}
		return string(h) + strings.Repeat("\x00", 12) + key
	}
	binNoop := "\x81\x0a" + strings.Repeat("\x00", 22)
	big := strings.Repeat("b", 2000)
	bigValue := "VALUE big 0 2000\r\n" + big + "\r\n"
	for _, tc := range []struct {
		name, req string
		want      []string // each message's payload; "" is a bare header
	}{
		{"hit then miss", "get a z\r\n", []string{"VALUE a 0 1\r\nx\r\n", "END\r\n"}},
		{"miss then hit", "get z a\r\n", []string{"", "VALUE a 0 1\r\nx\r\nEND\r\n"}},
		{"misses", "get y z w\r\n", []string{"", "END\r\n"}},
		{"one miss", "get z\r\n", []string{"END\r\n"}},
		{"misses between hits", "get a y z a w\r\n", []string{"VALUE a 0 1\r\nx\r\n", "VALUE a 0 1\r\nx\r\n", "END\r\n"}},
		{"spaces", "get  a   a \r\n", []string{"VALUE a 0 1\r\nx\r\n", "VALUE a 0 1\r\nx\r\nEND\r\n"}},
		{"gat", "gat 0 z a\r\n", []string{"", "VALUE a 0 1\r\nx\r\nEND\r\n"}},
		{"big value", "get big a\r\n", []string{bigValue, "VALUE a 0 1\r\nx\r\nEND\r\n"}},
		{"then an incomplete line", "get a a\r\nget", []string{"VALUE a 0 1\r\nx\r\n", "VALUE a 0 1\r\nx\r\nEND\r\n"}},
		// The close takes back what is not flushed: in memcached 1.6.45
		// a get's replies are not flushed after its END.
		{"then junk that closes", "get a z\r\n" + strings.Repeat("j", 3000), nil},
		{"key too long", "get a " + strings.Repeat("k", 251) + "\r\n", []string{"CLIENT_ERROR bad command line format\r\n\r\n"}},
		// Several requests: one message (gocached's deliberate difference).
		{"two gets", "get a z\r\nget a\r\n", []string{"VALUE a 0 1\r\nx\r\nEND\r\nVALUE a 0 1\r\nx\r\nEND\r\n"}},
		{"quit", "quit\r\n", []string{""}},
		{"quit with a token", "  quit now\r\n", []string{"ERROR\r\n"}}, // memcached 1.6.45: quit takes no argument
		{"noreply then quit", "set q 0 0 1 noreply\r\nq\r\nquit\r\n", []string{""}},
		{"get then quit", "get z\r\nquit\r\n", []string{"END\r\n"}},
		{"noreply", "set q 0 0 1 noreply\r\nq\r\n", nil},
		{"quiet meta miss", "mg z v q\r\n", nil},
		{"incomplete", "get a", nil},
		{"line too long", "delete " + strings.Repeat("k", 3000), nil},
		{"binary noop", bin(0x0a, ""), []string{binNoop}},
		{"binary quiet flush", bin(0x18, ""), []string{""}},
		{"binary quiet miss then noop", bin(0x09, "zz") + bin(0x0a, ""), []string{binNoop}},
		{"binary short", "\x80\x0a\x00", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := udpSessions(t)()
			for _, setup := range []string{"set a 0 0 1\r\nx\r\n", "set big 0 0 2000\r\n" + big + "\r\n"} {
				if f, _, err := reactor.UDPFrames(sess, frame(1, 0, 1, 0, setup), nil); err != nil || len(f) != 1 {
					t.Fatalf("setup: %q, %v", f, err)
				}
			}
			frames, _, err := reactor.UDPFrames(sess, frame(0x1234, 0, 1, 0, tc.req), nil)
			if err != nil {
				t.Fatal(err)
			}
			var want [][]byte
			for _, m := range tc.want {
				count := (len(m) + 1391) / 1392
				for seq := 0; seq == 0 || seq < count; seq++ {
					want = append(want, frame(0x1234, uint16(seq), uint16(count), 0, m[min(seq*1392, len(m)):min((seq+1)*1392, len(m))]))
				}
			}
			if fmt.Sprintf("%q", frames) != fmt.Sprintf("%q", want) {
				t.Errorf("got  %q\nwant %q", frames, want)
			}
			for _, f := range frames {
				if len(f) > 1400 || bytes.Equal(f[4:6], []byte{0, 0}) && len(f) != 8 {
					t.Errorf("bad datagram %q", f)
				}
			}
		})
	}
}
