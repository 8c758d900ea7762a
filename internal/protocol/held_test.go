package protocol

import (
	"testing"
)

// TestHeldItemIsNotRewrittenInPlace: an incr or decr that shortens a
// counter a reply not yet written holds (memcached's reference from a
// retrieval hit, until the next flush) stores a new item, unpadded; one
// after the reply was written (another read, or mn) rewrites the value in
// place, padded with spaces, as memcached does.
func TestHeldItemIsNotRewrittenInPlace(t *testing.T) {
	const set = "set n 0 0 3\r\n100\r\n"
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"get then decr, one read", []string{set + "get n\r\ndecr n 1\r\nget n\r\n"},
			"STORED\r\nVALUE n 0 3\r\n100\r\nEND\r\n99\r\nVALUE n 0 2\r\n99\r\nEND\r\n"},
		{"get then decr, two reads", []string{set + "get n\r\n", "decr n 1\r\nget n\r\n"},
			"STORED\r\nVALUE n 0 3\r\n100\r\nEND\r\n99\r\nVALUE n 0 3\r\n99 \r\nEND\r\n"},
		{"mn between", []string{set + "get n\r\nmn\r\ndecr n 1\r\nget n\r\n"},
			"STORED\r\nVALUE n 0 3\r\n100\r\nEND\r\nMN\r\n99\r\nVALUE n 0 3\r\n99 \r\nEND\r\n"},
		{"mg without v holds it too", []string{set + "mg n\r\nma n MD\r\nmg n v\r\n"},
			"STORED\r\nHD\r\nHD\r\nVA 2\r\n99\r\n"},
		{"a miss on another key holds nothing", []string{set + "get m\r\ndecr n 1\r\nget n\r\n"},
			"STORED\r\nEND\r\n99\r\nVALUE n 0 3\r\n99 \r\nEND\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSession(newTestEnv(t))
			var chunks [][]byte
			for _, c := range tt.chunks {
				chunks = append(chunks, []byte(c))
			}
			if got := drive(t, s, chunks...).out; got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
