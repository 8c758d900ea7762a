//go:build linux

package rawloop

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/gocached/gocached/internal/protocol"
	"golang.org/x/sys/unix"
)

// refSession is a lineSession that counts RefSent calls.
type refSession struct {
	lineSession
	sent int
}

func (s *refSession) SendRefs()                   {}
func (s *refSession) TakeRefs() []protocol.RefSeg { return nil }
func (s *refSession) RefSent()                    { s.sent++ }

// TestIovecsAndWrote writes replies with values in their places through a
// socket that takes k bytes at a time, for every k: what arrives must be
// the reply with each value at its At, and RefSent must come once, with
// the last byte of the last value, not before.
func TestIovecsAndWrote(t *testing.T) {
	val := func(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }
	cases := []struct {
		name string
		buf  string
		refs []protocol.RefSeg
	}{
		{"value alone", "", []protocol.RefSeg{{At: 0, Value: val('a', 7)}}},
		{"header, value, trailer", "VALUE k 0 7\r\n\r\nEND\r\n", []protocol.RefSeg{{At: 13, Value: val('a', 7)}}},
		{"values back to back", "VALUE a\r\n\r\nEND\r\n", []protocol.RefSeg{{At: 9, Value: val('a', 5)}, {At: 9, Value: val('b', 3)}}},
		{"value last", "VALUE k\r\n", []protocol.RefSeg{{At: 9, Value: val('a', 6)}}},
		{"two values apart", "H1\r\nmid\r\nEND\r\n", []protocol.RefSeg{{At: 4, Value: val('a', 5)}, {At: 9, Value: val('b', 4)}}},
	}
	for _, tc := range cases {
		var want []byte
		off := 0
		for _, r := range tc.refs {
			want = append(append(want, tc.buf[off:r.At]...), r.Value...)
			off = r.At
		}
		valuesEnd := len(want) // RefSent is due once this much is written
		want = append(want, tc.buf[off:]...)
		for k := 1; k <= len(want); k++ {
			sess := &refSession{}
			c := &Conn[sinkState]{Sess: sess, refs: sess, Refs: append([]protocol.RefSeg(nil), tc.refs...)}
			for _, r := range tc.refs {
				c.RefLeft += len(r.Value)
			}
			buf := []byte(tc.buf)
			sent, got := 0, []byte(nil)
			for round := 0; sent < len(buf) || c.Refs != nil; round++ {
				if round > len(want) {
					t.Fatalf("%s, %d a write: no progress after %q", tc.name, k, got)
				}
				var iov [MaxPieces]unix.Iovec
				n := c.Iovecs(&iov, buf, sent)
				// The socket takes the first k bytes of the pieces laid out.
				took := 0
				for _, v := range iov[:n] {
					if v.Len == 0 {
						t.Fatalf("%s: an empty piece laid out", tc.name)
					}
					b := unsafe.Slice(v.Base, v.Len)
					b = b[:min(len(b), k-took)]
					got, took = append(got, b...), took+len(b)
				}
				c.Wrote(buf, &sent, took)
				if done := len(got) >= valuesEnd; done != (sess.sent == 1) || sess.sent > 1 {
					t.Fatalf("%s, %d a write: RefSent %d times after %d of the %d bytes up to the last value's end",
						tc.name, k, sess.sent, len(got), valuesEnd)
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, %d a write: wrote %q, want %q", tc.name, k, got, want)
			}
			if sess.sent != 1 || c.RefLeft != 0 || c.RefDone != 0 {
				t.Fatalf("%s, %d a write: RefSent %d times, RefLeft %d, RefDone %d", tc.name, k, sess.sent, c.RefLeft, c.RefDone)
			}
		}
	}
}
