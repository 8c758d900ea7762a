package protocol

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestGetKeysAhead checks which keys the pre-pass hands the store, and how
// far it looked: complete get, gets and mg lines up to the first other
// command, within the line and key bounds.
func TestGetKeysAhead(t *testing.T) {
	long := strings.Repeat("k", 251)
	tests := []struct {
		name  string
		in    string
		lines int
		cap   int
		keys  []string
		seen  int
	}{
		{"pipelined gets", "get a\r\nget b\r\nget c\r\n", 20, 16, []string{"a", "b", "c"}, 21},
		{"multiget and gets", "get a b  c\r\ngets d\r\n", 20, 16, []string{"a", "b", "c", "d"}, 20},
		{"mg takes the key, not its flags", "mg a v f\r\nmg b\r\n", 20, 16, []string{"a", "b"}, 16},
		{"stops at a storage line", "get a\r\nset b 0 0 1\r\nx\r\nget c\r\n", 20, 16, []string{"a"}, 20},
		{"stops at another command", "get a\r\ngetx b\r\nget c\r\n", 20, 16, []string{"a"}, 15},
		{"an incomplete line is not read", "get a\r\nget b", 20, 16, []string{"a"}, 7},
		{"bare newlines", "get a\nget b\n", 20, 16, []string{"a", "b"}, 12},
		{"the line bound", "get a\r\nget b\r\nget c\r\n", 2, 16, []string{"a", "b"}, 14},
		{"the key bound", "get a b c\r\nget d\r\n", 20, 2, []string{"a", "b"}, 11},
		{"an over-long key is skipped", "get " + long + " a\r\nget b\r\n", 20, 16, []string{"a", "b"}, 4 + 251 + 4 + 7},
		{"a get without a key ends the run", "get \r\nget a\r\n", 20, 16, nil, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, seen := getKeysAhead([]byte(tt.in), tt.lines, make([][]byte, 0, tt.cap))
			var got []string
			for _, k := range keys {
				got = append(got, string(k))
			}
			if !slices.Equal(got, tt.keys) || seen != tt.seen {
				t.Errorf("getKeysAhead(%q) = %q, %d; want %q, %d", tt.in, got, seen, tt.keys, tt.seen)
			}
		})
	}
}

// TestPrefetchedHashesStayInTheirCall: a lookup takes the prefetch's hash of
// a key only for the same bytes of the same Process call's input. Here a
// multiget pauses (its replies fill the output budget) with a prefetched
// key unserved; the engine then hands in the rest of its buffer, which
// meanwhile holds another key where that one was (as when an engine moves
// its unread input to the front). A hash kept from the first call would
// send the lookup to the other key's place and miss it.
func TestPrefetchedHashesStayInTheirCall(t *testing.T) {
	env := newTestEnv(t)
	s := NewSession(env)
	big := strings.Repeat("v", 600<<10)
	setup := "set big1 0 0 " + strconv.Itoa(len(big)) + "\r\n" + big + "\r\n" +
		"set big2 0 0 " + strconv.Itoa(len(big)) + "\r\n" + big + "\r\n" +
		"set small 0 0 1\r\nS\r\nset other 0 0 1\r\nO\r\n"
	if r := drive(t, s, []byte(setup)); strings.Count(r.out, "STORED\r\n") != 4 {
		t.Fatalf("setup: %q", r.out)
	}
	// A second line makes the first one's keys worth prefetching.
	in := []byte("get big1 big2 small\r\nget big1\r\n")
	n, out, st := s.Process(in, nil)
	if st != Yield || n == 0 || strings.Contains(string(out), "END") {
		t.Fatalf("first call: %d bytes, status %v, %d bytes out; want a paused multiget", n, st, len(out))
	}
	at := strings.Index(string(in), "small")
	if at < n {
		t.Fatalf("the multiget paused past small (%d of %d bytes)", n, len(in))
	}
	copy(in[at:], "other")
	var got []byte
	for rest := in[n:]; len(rest) > 0; {
		k, o, st := s.Process(rest, nil)
		got = append(got, o...)
		if st == Close || k == 0 && st == NeedMore {
			t.Fatalf("stuck: %v with %q left", st, rest)
		}
		rest = rest[k:]
	}
	if !strings.Contains(string(got), "VALUE other 0 1\r\nO\r\nEND\r\n") {
		t.Errorf("the rest of the multiget: %q, want other's value", tail(got, 80))
	}
}

func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }

// TestInputKeys checks what PrefetchInputs hands the store: the keys of the
// one-line get inputs, across inputs, a batch at a time; nothing for a lone
// key, an input of several lines or one that does not hold a get line.
func TestInputKeys(t *testing.T) {
	tests := []struct {
		name    string
		ins     []string
		batches [][]string
	}{
		{"one get from each", []string{"get a\r\n", "mg b v\r\n", "gets c\r\n"}, [][]string{{"a", "b", "c"}}},
		{"a lone key is no batch", []string{"get a\r\n"}, nil},
		{"the rest of a line and other commands give nothing", []string{"1 0 5\r\nget x\r\n", "set a 0 0 1\r\nb\r\n", "get c\r\n", "get d"}, nil},
		{"reads of several lines have their own pre-pass", []string{"get a\r\nget b\r\n", "get c\r\n", "get d\r\n"}, [][]string{{"c", "d"}}},
		{"batches of four", []string{"get a b c\r\n", "get d\r\n", "get e\r\n", "mg f v\r\n", "gets g\r\n"}, [][]string{{"a", "b", "c", "d"}, {"e", "f", "g"}}},
		{"a lone key left after a batch", []string{"get a b\r\n", "get c d\r\n", "get e\r\n"}, [][]string{{"a", "b", "c", "d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ins [][]byte
			for _, in := range tt.ins {
				ins = append(ins, []byte(in))
			}
			var got [][]string
			for len(ins) > 0 {
				var keys [][]byte
				if keys, ins = inputKeys(ins, make([][]byte, 0, 4)); len(keys) > 1 {
					var b []string
					for _, k := range keys {
						b = append(b, string(k))
					}
					got = append(got, b)
				}
			}
			if len(got) != len(tt.batches) {
				t.Fatalf("batches %q, want %q", got, tt.batches)
			}
			for i := range got {
				if !slices.Equal(got[i], tt.batches[i]) {
					t.Errorf("batch %d: %q, want %q", i, got[i], tt.batches[i])
				}
			}
		})
	}
}

// TestPrefetchInputsAllocatesNothing: an engine calls it for every batch of
// receives; garbage there would be collected many times a second.
func TestPrefetchInputsAllocatesNothing(t *testing.T) {
	env := newTestEnv(t)
	ins := [][]byte{[]byte("get a\r\n"), []byte("mg b v\r\n"), []byte("get c d\r\n")}
	if n := testing.AllocsPerRun(100, func() { env.PrefetchInputs(ins) }); n != 0 {
		t.Errorf("PrefetchInputs: %v allocations a call", n)
	}
}
