package protocol

import (
	"slices"
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
