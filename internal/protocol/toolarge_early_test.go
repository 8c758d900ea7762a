package protocol

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestTooLargeAnsweredBeforeBlock pins a deliberate difference from
// memcached 1.6.18: a storage line whose value is larger than the item size
// limit is answered SERVER_ERROR as soon as the line is read, and its data
// block is then swallowed as it arrives. memcached queues the same error and
// sends it only once the whole block has been swallowed (so a client that
// stops partway never sees it). The bytes on the wire are the same once the
// block is in; only the moment differs.
func TestTooLargeAnsweredBeforeBlock(t *testing.T) {
	for _, tc := range []struct{ name, line, after string }{
		{"set", "set a 0 0 2000000\r\n", "get a\r\n"},
		{"ms", "ms a 2000000 T0\r\n", "mg a v\r\n"},
		{"ms q", "ms a 2000000 q\r\n", "mn\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(newTestEnv(t))
			const errLine = "SERVER_ERROR object too large for cache\r\n"
			got := drive(t, s, []byte(tc.line), []byte(strings.Repeat("v", 1000)))
			if got.out != errLine {
				t.Fatalf("after the line and part of its block: got %q, want %q", got.out, errLine)
			}
			// The rest of the block is swallowed; the command after it runs.
			rest := drive(t, s, []byte(strings.Repeat("v", 2000000-1000)+"\r\n"+tc.after))
			want := map[string]string{"set": "END\r\n", "ms": "EN\r\n", "ms q": "MN\r\n"}[tc.name]
			if rest.out != want {
				t.Fatalf("after the block: got %q, want %q", rest.out, want)
			}
		})
	}
}

// The binary protocol likewise: a SET over the item size limit is answered
// "Too large." as soon as its header is read, and its body is skipped as
// it comes; memcached answers once the whole body is in.
func TestBinaryTooLargeAnsweredBeforeBody(t *testing.T) {
	s := NewSession(newTestEnv(t))
	const vlen = 2000000
	head := binReq(opSet, "a", setExt(0, 0), "", 1, 0)
	hb := []byte(head)
	binary.BigEndian.PutUint32(hb[8:12], uint32(8+1+vlen)) // extras, key, value
	got := drive(t, s, hb, []byte(strings.Repeat("v", 1000)))
	want := "81 00 op=01 st=03 ext= key=\"\" val=\"Too large.\" opq=00000001 cas=0\n"
	if d := describePackets(got.out, got.closed); d != want {
		t.Fatalf("after the header and part of the body: got\n%swant\n%s", d, want)
	}
	rest := drive(t, s, []byte(strings.Repeat("v", vlen-1000)+binReq(opNoop, "", "", "", 2, 0)))
	want = "81 00 op=0a st=00 ext= key=\"\" val=\"\" opq=00000002 cas=0\n"
	if d := describePackets(rest.out, rest.closed); d != want {
		t.Fatalf("after the body: got\n%swant\n%s", d, want)
	}
}
