package protocol

import (
	"fmt"
	"strings"
	"testing"
)

// withValues is reply with the values of segs put in their places, as an
// engine writes them.
func withValues(reply []byte, segs []RefSeg) string {
	var b strings.Builder
	at := 0
	for _, seg := range segs {
		b.Write(reply[at:seg.At])
		b.Write(seg.Value)
		at = seg.At
	}
	b.Write(reply[at:])
	return b.String()
}

// A Session whose engine sends by reference (SendRefs) leaves a large
// value's bytes to it: the reply skips them, TakeRefs says where they go
// and hands them in the store's memory, pinned until RefSent, whatever
// becomes of the item meanwhile.
func TestValueByReferenceSurvivesFlood(t *testing.T) {
	const size = 60000 // over refMin, under valueChunk: not in pieces
	value := bigValue(size)
	for _, sc := range []struct{ name, req, want string }{
		{"get", "get big\r\nversion\r\n", "VALUE big 0 60000\r\n" + value + "\r\nEND\r\nVERSION "},
		{"get, another key after", "get big nokey\r\n", "VALUE big 0 60000\r\n" + value + "\r\nEND\r\n"},
		{"mg", "mg big v\r\nversion\r\n", "VA 60000\r\n" + value + "\r\nVERSION "},
		{"binary", binReq(opGet, "big", "", "", 0, 0), ""},
	} {
		t.Run(sc.name, func(t *testing.T) {
			env := pinEnv(t)
			drive(t, NewSession(env), []byte(fmt.Sprintf("set big 0 0 %d\r\n%s\r\n", size, value)))
			s := NewSession(env)
			s.SendRefs()
			in := []byte(sc.req)
			n, out, _ := s.Process(in, nil)
			if strings.Contains(string(out), value[:100]) {
				t.Fatalf("the value was copied into the reply")
			}
			segs := s.TakeRefs()
			if len(segs) != 1 || string(segs[0].Value) != value {
				t.Fatalf("TakeRefs: %d values", len(segs))
			}
			full := withValues(out, segs)
			if sc.want != "" && !strings.HasPrefix(full, sc.want) {
				t.Fatalf("reply with its value: %.60q..., want %.60q...", full, sc.want)
			}
			if sc.want == "" && !strings.HasSuffix(full, value) {
				t.Fatal("binary reply does not end with its value")
			}
			if s.Pending() {
				t.Fatal("pending before RefSent")
			}
			if k, more, _ := s.Process(in[n:], nil); k != 0 || len(more) != 0 {
				t.Fatalf("a call before RefSent consumed %d and wrote %q", k, more)
			}
			flood(t, env) // the client is slow; the store turns over
			if env.Store.Stats().Evictions == 0 {
				t.Fatal("the flood evicted nothing")
			}
			if string(segs[0].Value) != value {
				t.Fatal("the value's bytes changed under their pin")
			}
			s.RefSent()
			if p := env.Store.Pins(); p != 0 {
				t.Fatalf("%d pins left after RefSent", p)
			}
		})
	}
}

// A read of several gets hands the engine every large value of the call,
// up to MaxRefs; the rest are copied, and small values always are.
func TestValuesByReferenceInOneCall(t *testing.T) {
	env := pinEnv(t)
	large, small := bigValue(refMin), "small"
	var set, get, want strings.Builder
	const keys = MaxRefs + 2
	for i := range keys {
		set.WriteString(fmt.Sprintf("set k%d 0 0 %d noreply\r\n%s\r\n", i, len(large), large))
		get.WriteString(fmt.Sprintf("get k%d\r\n", i))
		want.WriteString(fmt.Sprintf("VALUE k%d 0 %d\r\n%s\r\nEND\r\n", i, len(large), large))
	}
	set.WriteString("set s 0 0 5 noreply\r\nsmall\r\n")
	get.WriteString("mg s v\r\n")
	want.WriteString("VA 5\r\n" + small + "\r\n")
	drive(t, NewSession(env), []byte(set.String()))
	s := NewSession(env)
	s.SendRefs()
	_, out, _ := s.Process([]byte(get.String()), nil)
	segs := s.TakeRefs()
	if len(segs) != MaxRefs {
		t.Fatalf("%d values by reference, want %d", len(segs), MaxRefs)
	}
	if got := withValues(out, segs); got != want.String() {
		t.Fatalf("replies with their values differ (%d bytes, want %d)", len(got), want.Len())
	}
	if p := env.Store.Pins(); p != MaxRefs {
		t.Fatalf("%d pins, want %d", p, MaxRefs)
	}
	s.RefSent()
	if p := env.Store.Pins(); p != 0 {
		t.Fatalf("%d pins after RefSent", p)
	}
}

// Below refMin, or for a Session whose engine did not ask, a value is
// copied into the reply as before; a Session reset while the engine holds
// values gives their pins back, and so does a get whose replies memcached
// drops for a bad key later on its line.
func TestValueByReferenceOnlyWhenAsked(t *testing.T) {
	env := pinEnv(t)
	small, large := bigValue(refMin-1), bigValue(refMin)
	drive(t, NewSession(env), []byte(fmt.Sprintf("set small 0 0 %d\r\n%s\r\nset large 0 0 %d\r\n%s\r\n",
		len(small), small, len(large), large)))

	plain := NewSession(env)
	if _, out, _ := plain.Process([]byte("get large\r\n"), nil); !strings.Contains(string(out), large) || plain.TakeRefs() != nil {
		t.Fatal("a Session that did not ask for references left the value out")
	}
	s := NewSession(env)
	s.SendRefs()
	if _, out, _ := s.Process([]byte("get small\r\n"), nil); !strings.Contains(string(out), small) || s.TakeRefs() != nil {
		t.Fatal("a value under refMin was left out")
	}
	_, out, _ := s.Process([]byte("get large\r\n"), nil)
	if segs := s.TakeRefs(); strings.Contains(string(out), large) || len(segs) != 1 || string(segs[0].Value) != large {
		t.Fatal("a value of refMin bytes was not sent by reference")
	}
	if p := env.Store.Pins(); p != 1 {
		t.Fatalf("%d pins while the engine holds the value, want 1", p)
	}
	s.Reset()
	if p := env.Store.Pins(); p != 0 {
		t.Fatalf("%d pins after Reset", p)
	}

	s.SendRefs()
	_, out, _ = s.Process([]byte("get large "+strings.Repeat("x", 251)+"\r\n"), nil)
	if !strings.HasPrefix(string(out), "CLIENT_ERROR") || s.TakeRefs() != nil || env.Store.Pins() != 0 {
		t.Fatalf("a get dropped for a bad key: %.40q, pins %d", out, env.Store.Pins())
	}
}
