package protocol

import (
	"bytes"
	"testing"
)

// TestLongLineWantDoubles: while a retrieval line longer than MaxLineLen
// arrives, Want steps through powers of two (capped at the multiget bound),
// so an engine reallocates its buffer a handful of times in all. A want of
// exactly twice what had come changed on every read, and the uring engine,
// which reads 16 KiB at a time, copied the whole line into a new buffer on
// each: a 30 MB line under -I 128m took 11 s of CPU, 100 MB 36 s.
func TestLongLineWantDoubles(t *testing.T) {
	env := newStillEnv(t) // -I 1m: the bound is 1 MiB
	s := NewSession(env)
	line := append([]byte("get "), bytes.Repeat([]byte("k "), 600<<10)...)
	wants := map[int]bool{}
	for n := 4 << 10; n < len(line) && n <= 1<<20; n += 16 << 10 {
		consumed, _, st := s.Process(line[:n], nil)
		if consumed != 0 || st != NeedMore {
			t.Fatalf("%d bytes: consumed %d, status %v", n, consumed, st)
		}
		w := s.Want()
		if w < n+1 && w != 1<<20+1 {
			t.Fatalf("%d bytes: Want %d is too small", n, w)
		}
		wants[w] = true
	}
	if len(wants) > 12 {
		t.Errorf("Want took %d values while a 1 MiB line arrived 16 KiB at a time", len(wants))
	}
	for w := range wants {
		if w > 1<<20+1 {
			t.Errorf("Want %d past the multiget bound", w)
		}
	}
}

// TestRetrievalLineBounds: a gat/gats line is refused past 64 KiB whatever
// -I is (memcached closes one at about 16 KiB), and a get/gets line is
// buffered whole only up to min(-I, 1 MiB), then served as it arrives: an
// unfinished line costs a connection at most 1 MiB, not -I.
func TestRetrievalLineBounds(t *testing.T) {
	keys := bytes.Repeat([]byte("k "), 40<<10) // 80 KiB, unended
	for _, c := range []struct {
		name    string
		itemMax int
		line    string
		wantOut string
		wantSt  Status
		maxWant int
	}{
		{"gat past 64 KiB, -I 1m", 1 << 20, "gat 0 ", "CLIENT_ERROR line too long\r\n", Close, 0},
		{"gats past 64 KiB, -I 4m", 4 << 20, "gats 0 ", "CLIENT_ERROR line too long\r\n", Close, 0},
		{"get buffered, -I 4m", 4 << 20, "get ", "", NeedMore, 1<<20 + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewSession(newTestEnvMemItem(t, 16<<20, c.itemMax))
			in := append([]byte(c.line), keys...)
			_, out, st := s.Process(in, nil)
			if string(out) != c.wantOut || st != c.wantSt {
				t.Fatalf("got %q, %v; want %q, %v", out, st, c.wantOut, c.wantSt)
			}
			if c.maxWant > 0 && (s.Want() <= len(in) || s.Want() > c.maxWant) {
				t.Fatalf("Want %d for %d bytes: want more than that, at most %d", s.Want(), len(in), c.maxWant)
			}
		})
	}
}
