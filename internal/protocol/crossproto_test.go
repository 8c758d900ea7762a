package protocol

import (
	"strings"
	"testing"
)

// TestBinaryPipelined runs every binary script that keeps the connection
// open back to back as one buffer, each followed by a flush.
func TestBinaryPipelined(t *testing.T) {
	flush := binReq(opFlush, "", "", "", 0xf1, 0)
	flushReply := describePackets(string(appendBinHeader(nil, opFlush, 0, 0, 0, 0, [4]byte{0, 0, 0, 0xf1}, 0)), false)
	var in, want strings.Builder
	n := 0
	for _, sc := range binScripts {
		w := binWants[sc.name]
		// Left out: scripts that close, that end inside a request, or
		// that leave the stream out of step (memcached swallows an unknown
		// command's body after its extras, so "verbosity" eats 4 bytes of
		// what follows).
		if strings.HasSuffix(w, "closed\n") || sc.name == "text after binary start" || sc.name == "verbosity unknown" ||
			len(sc.in) > 1<<16 {
			continue
		}
		in.WriteString(sc.in + flush)
		want.WriteString(w + flushReply)
		n++
	}
	got := runBinary(t, in.String())
	if g := describePackets(got.out, got.closed); g != want.String() {
		t.Fatalf("%d pipelined scripts:\ngot:\n%s\nwant:\n%s", n, g, want.String())
	}
}

// TestProtocolsShareItems: an item stored through one protocol is the same
// item through the others, flags, CAS and all, on one store.
func TestProtocolsShareItems(t *testing.T) {
	env := newStillEnv(t)
	bin := func(in string) string {
		r := drive(t, NewSession(env), []byte(in))
		return describePackets(r.out, r.closed)
	}
	text := func(in string) string { return drive(t, NewSession(env), []byte(in)).out }

	bin(binReq(opSet, "k", setExt(42, 0), "from binary", 1, 0))
	if got := text("get k\r\nmg k f v s\r\n"); got != lines("VALUE k 42 11", "from binary", "END", "VA 11 f42 s11", "from binary") {
		t.Fatalf("text/meta view of a binary set: %q", got)
	}
	text("ms m 4 F7 T0\r\nmeta\r\nset t 9 0 4\r\ntext\r\n")
	got := bin(binReq(opGetK, "m", "", "", 2, 0) + binReq(opGetK, "t", "", "", 3, 0))
	want := "81 00 op=0c st=00 ext=00000007 key=\"m\" val=\"meta\" opq=00000002 cas=C\n" +
		"81 00 op=0c st=00 ext=00000009 key=\"t\" val=\"text\" opq=00000003 cas=C\n"
	if got != want {
		t.Fatalf("binary view of text/meta sets:\n%s", got)
	}
	// The CAS a text gets reports works for a binary compare-and-swap.
	out := text("gets k\r\n")
	cas := strings.Fields(strings.SplitN(out, "\r\n", 2)[0])[4]
	var u uint64
	for _, c := range cas {
		u = u*10 + uint64(c-'0')
	}
	got = bin(binReq(opSet, "k", setExt(0, 0), "swapped", 4, u) + binReq(opSet, "k", setExt(0, 0), "again", 5, u))
	if !strings.Contains(got, "opq=00000004 cas=C") || !strings.Contains(got, "st=02") {
		t.Fatalf("binary cas with a text unique:\n%s", got)
	}
	if got := text("mg k v\r\n"); got != lines("VA 7", "swapped") {
		t.Fatalf("after binary cas: %q", got)
	}
}
