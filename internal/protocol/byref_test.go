package protocol

import (
	"fmt"
	"strings"
	"testing"
)

// A Session whose engine sends by reference (SendRefs) leaves a large
// value's bytes to it: the reply stops before the value, TakeRef hands the
// bytes in the store's memory, pinned, and the reply's end follows once
// the engine reports them sent, whatever became of the item meanwhile.
func TestValueByReferenceSurvivesFlood(t *testing.T) {
	const size = 60000 // over refMin, under valueChunk: not in pieces
	for _, sc := range []struct{ name, req, head, tail, rest string }{
		{"get", "get big\r\nversion\r\n", "VALUE big 0 60000\r\n", "\r\nEND\r\n", "VERSION "},
		{"get, not the last key", "get big nokey\r\n", "VALUE big 0 60000\r\n", "\r\n", "END\r\n"},
		{"mg", "mg big v\r\nversion\r\n", "VA 60000\r\n", "\r\n", "VERSION "},
		{"binary", binReq(opGet, "big", "", "", 0, 0), "", "", ""},
	} {
		t.Run(sc.name, func(t *testing.T) {
			env := pinEnv(t)
			value := bigValue(size)
			drive(t, NewSession(env), []byte(fmt.Sprintf("set big 0 0 %d\r\n%s\r\n", size, value)))
			s := NewSession(env)
			s.SendRefs()
			in := []byte(sc.req)
			n, out, st := s.Process(in, nil)
			if st != NeedMore || !strings.HasPrefix(string(out), sc.head) || strings.Contains(string(out), value[:100]) {
				t.Fatalf("first call: %v, %d bytes: %.60q", st, len(out), out)
			}
			ext, tail := s.TakeRef()
			if string(ext) != value || string(tail) != sc.tail {
				t.Fatalf("TakeRef: %d bytes, not the value, then %q, want %q", len(ext), tail, sc.tail)
			}
			if again, _ := s.TakeRef(); s.Pending() || again != nil {
				t.Fatal("pending, or a second TakeRef, before RefSent")
			}
			if k, more, _ := s.Process(in[n:], nil); k != 0 || len(more) != 0 {
				t.Fatalf("a call before RefSent consumed %d and wrote %q", k, more)
			}
			flood(t, env) // the client is slow; the store turns over
			if env.Store.Stats().Evictions == 0 {
				t.Fatal("the flood evicted nothing")
			}
			if string(ext) != value {
				t.Fatal("the value's bytes changed under their pin")
			}
			s.RefSent()
			var rest []byte
			for i := 0; s.Pending() || n < len(in); i++ {
				k, more, st := s.Process(in[n:], nil)
				if st == Close || i > 10 {
					t.Fatalf("after RefSent: %v after %d calls", st, i)
				}
				n += k
				rest = append(rest, more...)
			}
			if !strings.HasPrefix(string(rest), sc.rest) || strings.Count(string(rest), "END") > strings.Count(sc.rest, "END") {
				t.Fatalf("after the value and its tail: %.40q, want %q first", rest, sc.rest)
			}
			if p := env.Store.Pins(); p != 0 {
				t.Fatalf("%d pins left after the reply", p)
			}
		})
	}
}

// Below refMin, or for a Session whose engine did not ask, a value is
// copied into the reply as before; a Session reset while the engine holds
// a value's bytes gives its pin back.
func TestValueByReferenceOnlyWhenAsked(t *testing.T) {
	env := pinEnv(t)
	small, large := bigValue(refMin-1), bigValue(refMin)
	drive(t, NewSession(env), []byte(fmt.Sprintf("set small 0 0 %d\r\n%s\r\nset large 0 0 %d\r\n%s\r\n",
		len(small), small, len(large), large)))

	plain := NewSession(env)
	if _, out, _ := plain.Process([]byte("get large\r\n"), nil); !strings.Contains(string(out), large) || ref(plain) != nil {
		t.Fatal("a Session that did not ask for references left the value out")
	}
	s := NewSession(env)
	s.SendRefs()
	if _, out, _ := s.Process([]byte("get small\r\n"), nil); !strings.Contains(string(out), small) || ref(s) != nil {
		t.Fatal("a value under refMin was left out")
	}
	if _, out, _ := s.Process([]byte("get large\r\n"), nil); strings.Contains(string(out), large) || string(ref(s)) != large {
		t.Fatal("a value of refMin bytes was not sent by reference")
	}
	if p := env.Store.Pins(); p != 1 {
		t.Fatalf("%d pins while the engine holds the value, want 1", p)
	}
	s.Reset()
	if p := env.Store.Pins(); p != 0 {
		t.Fatalf("%d pins after Reset", p)
	}
}

// ref is the value TakeRef hands out.
func ref(s *Session) []byte {
	v, _ := s.TakeRef()
	return v
}
