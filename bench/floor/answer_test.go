package floor

import (
	"strings"
	"testing"
)

// TestAnswer: replies come for whole requests only, however the reads
// split them, and a set's data is skipped, not taken for a command.
func TestAnswer(t *testing.T) {
	hit := func(key string) string {
		return "VALUE " + key + " 0 100\r\n" + strings.Repeat("x", 100) + "\r\nEND\r\n"
	}
	tests := []struct {
		name  string
		reads []string
		want  string
	}{
		{"one get", []string{"get k1\r\n"}, hit("k1")},
		{"pipelined", []string{"get a\r\nget b\r\n"}, hit("a") + hit("b")},
		{"split line", []string{"ge", "t a", "\r\n"}, hit("a")},
		{"set", []string{"set k 0 0 5\r\nhello\r\n"}, "STORED\r\n"},
		{"set data split", []string{"set k 0 0 5\r\nhe", "llo\r", "\nget k\r\n"}, "STORED\r\n" + hit("k")},
		{"set data like a command", []string{"set k 0 0 9\r\nget x\r\nx\r\n"}, "STORED\r\n"},
		{"unknown", []string{"version\r\n"}, "ERROR\r\n"},
	}
	for _, tt := range tests {
		var c Requests
		var got []byte
		for _, r := range tt.reads {
			got = c.Answer([]byte(r), got)
		}
		if string(got) != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
