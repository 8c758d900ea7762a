package protocol

import (
	"bytes"
	"testing"
)

// TestTokenEnd checks the eight-bytes-at-a-time scan against a byte loop:
// every filler byte, every line length around the word size, a separator
// at every place (and a second one after it, which must not be the one
// found), from every start.
func TestTokenEnd(t *testing.T) {
	naive := func(line []byte, i int) int {
		if j := bytes.IndexByte(line[i:], sep); j >= 0 {
			return i + j
		}
		return len(line)
	}
	for fill := range 256 {
		if fill == sep {
			continue
		}
		for n := range 20 {
			for at := -1; at < n; at++ { // -1: no separator
				line := bytes.Repeat([]byte{byte(fill)}, n)
				if at >= 0 {
					line[at] = sep
					if at+3 < n {
						line[at+3] = sep
					}
				}
				for i := 0; i <= n; i++ {
					if got, want := tokenEnd(line, i), naive(line, i); got != want {
						t.Fatalf("tokenEnd(%q, %d) = %d, want %d", line, i, got, want)
					}
				}
			}
		}
	}
}

func TestNextToken(t *testing.T) {
	for _, tt := range []struct {
		line       string
		i          int
		start, end int
	}{
		{"get key", 0, 0, 3},
		{"get key", 3, 4, 7},
		{"get   a-key-longer-than-a-word x", 3, 6, 30},
		{"get key  ", 7, 9, 9},
		{"", 0, 0, 0},
		{"k\x00\t\r\xa0\x21 x", 0, 0, 6},
	} {
		start, end := nextToken([]byte(tt.line), tt.i)
		if start != tt.start || end != tt.end {
			t.Errorf("nextToken(%q, %d) = %d, %d, want %d, %d", tt.line, tt.i, start, end, tt.start, tt.end)
		}
	}
}
