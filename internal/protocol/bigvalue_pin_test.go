package protocol

import (
	"fmt"
	"strings"
	"testing"
)

// What happens to large values when the store turns over under them: as
// in memcached, whose item being sent or read is referenced, a reply in
// pieces completes with the value as it was read, and a value being
// received is stored whole; the store's pins go once the reply is sent or
// the connection is reset.

// pinEnv is an 8 MiB store with -I 2m, so a flood reaches every item.
func pinEnv(t *testing.T) *Env {
	env := newTestEnvMemItem(t, 8<<20, 2<<20)
	env.ResumesPending = true
	return env
}

// flood stores 9 MiB of other items through a second connection.
func flood(t *testing.T, env *Env) {
	other := NewSession(env)
	v := strings.Repeat("F", 60000)
	for i := range 150 {
		drive(t, other, fmt.Appendf(nil, "set f%d 0 0 60000 noreply\r\n%s\r\n", i, v))
	}
}

func TestReplyInPiecesSurvivesFlood(t *testing.T) {
	for _, sc := range []struct{ name, req, head string }{
		{"get", "get big\r\nversion\r\n", "VALUE big 0 1500000\r\n"},
		{"mg", "mg big v\r\nversion\r\n", "VA 1500000\r\n"},
		{"binary", binReq(opGet, "big", "", "", 0, 0), ""},
	} {
		t.Run(sc.name, func(t *testing.T) {
			env := pinEnv(t)
			value := bigValue(1_500_000)
			drive(t, NewSession(env), []byte("set big 0 0 1500000\r\n"+value+"\r\n"))
			s := NewSession(env)
			in := []byte(sc.req)
			n, out, st := s.Process(in, nil)
			if st != NeedMore || !s.Pending() || !strings.HasPrefix(string(out), sc.head) {
				t.Fatalf("first call: %v pending %v, %d bytes", st, s.Pending(), len(out))
			}
			reply := append([]byte(nil), out...)
			flood(t, env) // the client is slow; the store turns over
			if env.Store.Stats().Evictions == 0 {
				t.Fatal("the flood evicted nothing")
			}
			for i := 0; s.Pending() || n < len(in); i++ {
				k, more, st := s.Process(in[n:], nil)
				if st == Close || i > 1000 {
					t.Fatalf("after the flood: %v after %d calls", st, i)
				}
				n += k
				reply = append(reply, more...)
			}
			if !strings.Contains(string(reply), value) {
				t.Fatalf("the %d-byte reply lacks the value as it was", len(reply))
			}
			if p := env.Store.Pins(); p != 0 {
				t.Fatalf("%d pins left after the reply", p)
			}
		})
	}
}

// A connection reset in the middle of a reply in pieces, or of a value
// being received, leaves no pin and no reserved chunk behind.
func TestResetReleasesPinsAndReservations(t *testing.T) {
	env := pinEnv(t)
	value := bigValue(1_500_000)
	drive(t, NewSession(env), []byte("set big 0 0 1500000\r\n"+value+"\r\n"))
	before := env.Store.Classes()
	s := NewSession(env)
	if _, _, _ = s.Process([]byte("get big\r\n"), nil); !s.Pending() || env.Store.Pins() != 1 {
		t.Fatalf("pending %v, %d pins", s.Pending(), env.Store.Pins())
	}
	s.Reset()
	if p := env.Store.Pins(); p != 0 {
		t.Fatalf("%d pins after reset", p)
	}
	r := NewSession(env)
	if n, out, _ := r.Process([]byte("set other 0 0 1500000\r\n"+value[:400_000]), nil); n == 0 || len(out) != 0 {
		t.Fatalf("consumed %d, replied %q", n, out)
	}
	r.Reset()
	after := env.Store.Classes()
	for i := range min(len(before), len(after)) {
		if before[i].UsedChunks != after[i].UsedChunks {
			t.Fatalf("class %d: used chunks %d before, %d after a reset mid-value", after[i].ID, before[i].UsedChunks, after[i].UsedChunks)
		}
	}
}

func TestReservationSurvivesFlood(t *testing.T) {
	value := bigValue(1_000_000)
	for _, sc := range []struct{ name, head, tail, want string }{
		{"set", "set a 0 0 1000000\r\n", "\r\nversion\r\n", lines("STORED", "VERSION 1.6.18")},
		{"set noreply", "set a 0 0 1000000 noreply\r\n", "\r\nversion\r\n", lines("VERSION 1.6.18")},
		{"set bad terminator", "set a 0 0 1000000\r\n", "XYversion\r\n", lines("CLIENT_ERROR bad data chunk", "VERSION 1.6.18")},
		{"ms", "ms a 1000000 q\r\n", "\r\nmn\r\n", lines("MN")},
	} {
		t.Run(sc.name, func(t *testing.T) {
			env := pinEnv(t)
			drive(t, NewSession(env), []byte("set a 0 0 5\r\nolder\r\n"))
			s := NewSession(env)
			in := []byte(sc.head + value[:400_000])
			n, out, _ := s.Process(in, nil)
			if n != len(in) || len(out) != 0 {
				t.Fatalf("consumed %d of %d, replied %q", n, len(in), out)
			}
			flood(t, env)
			got := drive(t, s, []byte(value[400_000:]+sc.tail))
			if got.out != sc.want {
				t.Fatalf("got %q\nwant %q", abbrev(got.out), abbrev(sc.want))
			}
			want := lines("VALUE a 0 1000000", value, "END")
			if strings.Contains(sc.name, "bad") {
				want = lines("VALUE a 0 5", "older", "END") // a set with bad data keeps the old value
			}
			if r := drive(t, NewSession(env), []byte("get a\r\n")); r.out != want {
				t.Fatalf("after: %q", abbrev(r.out))
			}
		})
	}
}
