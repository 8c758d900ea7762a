package protocol

import (
	"fmt"
	"strings"
	"testing"
)

// What happens to large values when the store's ring turns over under
// them: a reply in pieces whose bytes were overwritten is cut (the
// connection closes), a value being received whose reservation was passed
// is refused as out of memory.

// oneRingEnv has a single 8 MiB ring (-I 2m), so floods reach every item.
func oneRingEnv(t *testing.T) *Env {
	env := newTestEnvMemItem(t, 8<<20, 2<<20)
	env.ResumesPending = true
	return env
}

// flood stores 8 MiB of other items through a second connection.
func flood(t *testing.T, env *Env) {
	other := NewSession(env)
	v := strings.Repeat("F", 60000)
	for i := range 150 {
		drive(t, other, fmt.Appendf(nil, "set f%d 0 0 60000 noreply\r\n%s\r\n", i, v))
	}
}

func TestChunkedReplyCutWhenOverwritten(t *testing.T) {
	for _, sc := range []struct{ name, req, head string }{
		{"get", "get big\r\nversion\r\n", "VALUE big 0 1500000\r\n"},
		{"mg", "mg big v\r\nversion\r\n", "VA 1500000\r\n"},
		{"binary", binReq(opGet, "big", "", "", 0, 0), ""},
	} {
		t.Run(sc.name, func(t *testing.T) {
			env := oneRingEnv(t)
			value := bigValue(1_500_000)
			drive(t, NewSession(env), []byte("set big 0 0 1500000\r\n"+value+"\r\n"))
			s := NewSession(env)
			n, out, st := s.Process([]byte(sc.req), nil)
			if st != NeedMore || !s.Pending() || len(out) < OutputBudget/2 {
				t.Fatalf("first call: %v pending %v, %d bytes", st, s.Pending(), len(out))
			}
			if !strings.HasPrefix(string(out), sc.head) || !strings.Contains(value, string(out[len(out)-100:])) {
				t.Fatal("first piece is not the value's start")
			}
			flood(t, env) // the client is slow; the ring turns over
			_, more, st := s.Process([]byte(sc.req)[n:], nil)
			if st != Close || len(more) != 0 {
				t.Fatalf("after the overwrite: %v with %d more bytes", st, len(more))
			}
			if lost := env.Store.Stats().RefsLost; lost != 1 {
				t.Fatalf("RefsLost %d", lost)
			}
		})
	}
}

// Without the flood the same reply completes (the test above can fail).
func TestChunkedReplyCompletesWhenIntact(t *testing.T) {
	env := oneRingEnv(t)
	value := bigValue(1_500_000)
	drive(t, NewSession(env), []byte("set big 0 0 1500000\r\n"+value+"\r\n"))
	got, closed := engineRun(t, NewSession(env), []byte("get big\r\n"))
	if closed || got != lines("VALUE big 0 1500000", value, "END") {
		t.Fatalf("closed %v, %d bytes", closed, len(got))
	}
}

func TestReservationLostAnswersOutOfMemory(t *testing.T) {
	value := bigValue(1_000_000)
	for _, sc := range []struct{ name, head, tail, want string }{
		{"set", "set a 0 0 1000000\r\n", "\r\nversion\r\n", lines("SERVER_ERROR out of memory storing object", "VERSION 1.6.18")},
		{"set noreply", "set a 0 0 1000000 noreply\r\n", "\r\nversion\r\n", lines("VERSION 1.6.18")},
		{"set bad terminator", "set a 0 0 1000000\r\n", "XYversion\r\n", lines("SERVER_ERROR out of memory storing object", "VERSION 1.6.18")},
		{"ms", "ms a 1000000 q\r\n", "\r\nmn\r\n", lines("SERVER_ERROR out of memory storing object", "MN")},
		{"binary", "", "", ""},
	} {
		t.Run(sc.name, func(t *testing.T) {
			head, tail, want := sc.head, sc.tail, sc.want
			if sc.name == "binary" {
				full := binReq(opSet, "a", setExt(0, 0), value, 7, 0)
				head, tail = full[:len(full)-len(value)], binReq(opNoop, "", "", "", 8, 0)
			}
			env := oneRingEnv(t)
			drive(t, NewSession(env), []byte("set a 0 0 5\r\nolder\r\n"))
			s := NewSession(env)
			in := []byte(head + value[:400_000])
			n, out, _ := s.Process(in, nil)
			if n != len(in) || len(out) != 0 {
				t.Fatalf("consumed %d of %d, replied %q", n, len(in), out)
			}
			flood(t, env)
			got := drive(t, s, []byte(value[400_000:]+tail))
			if sc.name == "binary" {
				// SET's "no memory" error, then the NOOP's reply.
				text := "Out of memory allocating item"
				if len(got.out) != 2*24+len(text) || got.out[1] != opSet || got.out[7] != byte(statusNoMemory) ||
					got.out[24:24+len(text)] != text || got.out[24+len(text)+1] != opNoop {
					t.Fatalf("got %q", got.out)
				}
			} else if got.out != want {
				t.Fatalf("got %q\nwant %q", abbrev(got.out), abbrev(want))
			}
			st := env.Store.Stats()
			if st.ReservationsLost != 1 || st.OutOfMemory != 1 {
				t.Fatalf("lost %d, out of memory %d", st.ReservationsLost, st.OutOfMemory)
			}
			// A set that could not be stored leaves no older value behind.
			if r := drive(t, NewSession(env), []byte("get a\r\n")); r.out != "END\r\n" {
				t.Fatalf("after: %q", r.out)
			}
		})
	}
}
