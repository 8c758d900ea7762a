package protocol

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func TestDecodeBase64Key(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"YWJj", "abc", true},
		{"YQ==", "a", true},
		{"YWI=", "ab", true},
		{"YQ", "", false},       // not a multiple of four
		{"YQ===", "", false},    // five characters
		{"Y===", "", false},     // three pad characters
		{"Y!Q=\n=", "a", true},  // bytes outside the alphabet are skipped, as memcached does
		{"YQ==YWJj", "a", true}, // the first padded block ends the key
		{"", "", false},
		{"!!!!", "", false},
	} {
		got, ok := decodeBase64Key(nil, []byte(c.in))
		if ok != c.ok || string(got) != c.want {
			t.Errorf("decode(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzBase64Key: the decoder never panics, and reads back whatever the
// standard encoder writes.
func FuzzBase64Key(f *testing.F) {
	for _, s := range []string{"YWJj", "YQ==", "Y!Q==", "====", "", "\x00\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeBase64Key(nil, b)
		if len(b) == 0 {
			return
		}
		enc := base64.StdEncoding.EncodeToString(b)
		got, ok := decodeBase64Key(nil, []byte(enc))
		if !ok || !bytes.Equal(got, b) {
			t.Fatalf("round trip of %x via %q: %x, %v", b, enc, got, ok)
		}
	})
}
