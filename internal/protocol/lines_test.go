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
	line := append([]byte("gat 0 "), bytes.Repeat([]byte("k "), 600<<10)...)
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
