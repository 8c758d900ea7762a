package protocol

import "github.com/gocached/gocached/internal/store"

// The key rules, in one place: every parser (text, meta, binary) asks these
// two functions, so the protocols cannot drift apart on what a key is.

// isSep reports whether c ends a token, and so a key, on a text or meta
// command line. memcached splits on ' ' only: a tab or a control character
// is part of the token.
func isSep(c byte) bool { return c == ' ' }

// validKey reports whether key is acceptable on a text line: 1 to
// store.MaxKeyLen bytes and free of control characters (separators cannot
// occur, they end the token). Binary-protocol and base64 meta keys are raw
// bytes and only have their length checked.
func validKey(key []byte) bool {
	if len(key) == 0 || len(key) > store.MaxKeyLen {
		return false
	}
	for _, c := range key {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
