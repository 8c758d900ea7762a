package enginetest

import (
	"bytes"
	"testing"

	"github.com/gocached/gocached/internal/protocol"
)

// TestFakeValue: the value `gen n` returns is the alphabet repeated, at
// every length, across the copies AppendFakeValue makes of its pattern.
func TestFakeValue(t *testing.T) {
	for _, n := range []int{0, 1, 25, 26, 27, len(fakePattern) - 1, len(fakePattern), len(fakePattern) + 1, 3*len(fakePattern) + 5} {
		got := FakeValue(n)
		if len(got) != n {
			t.Fatalf("FakeValue(%d) has %d bytes", n, len(got))
		}
		for i, b := range got {
			if b != byte('a'+i%26) {
				t.Fatalf("FakeValue(%d)[%d] = %q, want %q", n, i, b, byte('a'+i%26))
			}
		}
	}
}

// TestFakeProcess: the Fake's requests, pipelined, with a body split off
// (Want tells how much the set needs) and -R yields.
func TestFakeProcess(t *testing.T) {
	f := NewFakeStore().NewSession(2)().(*Fake)
	in := []byte("set k 3\r\nab")
	n, out, st := f.Process(in, nil)
	if n != 0 || len(out) != 0 || st != protocol.NeedMore || f.Want() != len("set k 3\r\nabc\r\n") {
		t.Fatalf("partial set: consumed %d, out %q, status %v, want %d", n, out, st, f.Want())
	}
	in = []byte("set k 3\r\nabc\r\nget k\r\ngen 3\r\nbogus\r\nquit\r\n")
	n, out, st = f.Process(in, nil)
	if want := "STORED\r\nVALUE k 3\r\nabc\r\nEND\r\n"; string(out) != want || st != protocol.Yield {
		t.Fatalf("first call: %q, %v; want %q and a yield", out, st, want)
	}
	in = in[n:]
	n, out, st = f.Process(in, nil)
	if want := string(FakeReply(3)) + "ERROR\r\n"; string(out) != want || st != protocol.Yield {
		t.Fatalf("second call: %q, %v; want %q and a yield", out, st, want)
	}
	if n, _, st = f.Process(in[n:], nil); st != protocol.Close || n != len("quit\r\n") {
		t.Fatalf("quit: consumed %d, %v", n, st)
	}
	if _, _, st := f.Process(bytes.Repeat([]byte("x"), FakeMaxLine+1), nil); st != protocol.Close {
		t.Fatalf("a line past FakeMaxLine: %v, want Close", st)
	}
}
