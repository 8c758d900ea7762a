package protocol

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestReplyRoom(t *testing.T) {
	s := NewSession(newTinyEnv(t))
	small := append(make([]byte, 0, 16<<10), "VALUE k 0 5\r\n"...)
	s.outIn = small // the engine's buffer, as in Process
	if got := s.replyRoom(small, 100); &got[0] != &small[0] {
		t.Fatal("a reply that fits moved")
	}
	// The smallest class that holds the reply.
	for _, c := range []struct{ n, want int }{{20 << 10, 64 << 10}, {64 << 10, 256 << 10}, {300 << 10, ReplyBufCap}} {
		got := s.replyRoom(small, c.n)
		if cap(got) != c.want || string(got) != string(small) {
			t.Errorf("room for %d: cap %d, want %d", c.n, cap(got), c.want)
		}
		RecycleReply(got)
	}
	// Past the largest class a reply grows as append grows it.
	big := s.replyRoom(small, 300<<10)
	huge := s.replyRoom(big, ReplyBufCap)
	if cap(huge) < len(big)+ReplyBufCap || cap(huge) == ReplyBufCap || string(huge) != string(small) {
		t.Fatalf("past the pool: cap %d", cap(huge))
	}
	RecycleReply(small) // not the pool's: ignored, nothing to check but no panic
	RecycleReply(huge)
}

// TestLargeRepliesUsePooledBuffers: every shape of large reply (a text get
// of a value sent in pieces, a meta get and a binary get of a value below
// the piece size, a multiget of mid-sized values) moves into one pooled
// buffer instead of growing by append, and the reply is unchanged.
func TestLargeRepliesUsePooledBuffers(t *testing.T) {
	env := newTestEnvMemItem(t, 64<<20, 4<<20)
	env.ResumesPending = true
	s := NewSession(env)
	v3m := strings.Repeat("a", 3<<20)
	v40k := strings.Repeat("b", 40<<10)
	drive(t, s, []byte("set big 0 0 3145728\r\n"+v3m+"\r\nset mid 0 0 40960\r\n"+v40k+"\r\n"))
	binGet := []byte(binReq(0x00, "mid", "", "", 0, 0))
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"get in pieces", []byte("get big\r\n"), "VALUE big 0 3145728\r\n" + v3m + "\r\nEND\r\n"},
		{"meta get", []byte("mg mid v\r\n"), "VA 40960\r\n" + v40k + "\r\n"},
		{"binary get", binGet, ""},
		{"multiget", []byte("get mid mid mid\r\n"), strings.Repeat("VALUE mid 0 40960\r\n"+v40k+"\r\n", 3) + "END\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewSession(env) // binary or text by its first byte
			in := c.in
			var got []byte
			for calls := 0; ; calls++ {
				n, o, st := s.Process(in, make([]byte, 0, 16<<10))
				if st == Close || calls > 100 {
					t.Fatalf("status %v after %d calls", st, calls)
				}
				if len(o) > 16<<10 && !slices.Contains(replyClasses[:], cap(o)) {
					t.Fatalf("call %d: %d-byte reply in a buffer of cap %d, not a pooled one", calls, len(o), cap(o))
				}
				got, in = append(got, o...), in[n:]
				RecycleReply(o)
				if !s.Pending() && len(in) == 0 {
					break
				}
			}
			if c.want != "" && !bytes.Equal(got, []byte(c.want)) {
				t.Fatalf("reply differs: %d bytes, want %d", len(got), len(c.want))
			}
			if c.want == "" && !bytes.HasSuffix(got, []byte(v40k)) {
				t.Fatalf("binary reply of %d bytes does not end with the value", len(got))
			}
		})
	}
}

// BenchmarkGetLarge measures a get of a 1 MiB value as the engines run it:
// a fresh small buffer per turn, the reply given back once "sent". Its
// B/op is what the collector has to clean up per get.
func BenchmarkGetLarge(b *testing.B) {
	env := newTestEnvMemItem(b, 64<<20, 2<<20)
	env.ResumesPending = true
	s := NewSession(env)
	value := strings.Repeat("v", 1<<20)
	runBatch(b, s, []byte("set big 0 0 1048576\r\n"+value+"\r\n"), nil)
	in := []byte("get big\r\n")
	small := make([]byte, 0, 16<<10)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rest := in
		for {
			n, o, _ := s.Process(rest, small[:0])
			rest = rest[n:]
			RecycleReply(o)
			if !s.Pending() && len(rest) == 0 {
				break
			}
		}
	}
}
