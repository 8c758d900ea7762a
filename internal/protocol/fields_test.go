package protocol

import (
	"slices"
	"testing"
)

func TestCommandFields(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"get a b\r", []string{"get", "a", "b"}},
		{"  get   a  ", []string{"get", "a"}},
		{"get a\x00b c", []string{"get", "a\x00b", "c"}},
		{"get a\tb", []string{"get", "a\tb"}},
		{"\r", []string{"\r"}},
		{"get a\r\r", []string{"get", "a\r"}},
		{"", nil},
	} {
		var got []string
		for _, f := range CommandFields([]byte(tt.line)) {
			got = append(got, string(f))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("CommandFields(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
	// Every token the parser splits, CommandFields splits alike.
	line := []byte("gat 10 k1 k2\x00 k3\tk4   k5")
	var c textCommand
	n := c.tokenize(line)
	fields := CommandFields(line)
	if n != len(fields) {
		t.Fatalf("tokenize %d tokens, CommandFields %d", n, len(fields))
	}
	for i := range n {
		if string(c.token(line, i)) != string(fields[i]) {
			t.Errorf("token %d: %q vs %q", i, c.token(line, i), fields[i])
		}
	}
}
