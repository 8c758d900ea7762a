package protocol

import "github.com/gocached/gocached/internal/store"

// The key rules, in one place: every parser (text, meta, binary) asks these
// two functions, so the protocols cannot drift apart on what a key is.

// isSep reports whether c ends a token, and so a key, on a text or meta
// command line. memcached splits on ' ' only: a tab or a control character
// is part of the token.
func isSep(c byte) bool { return c == ' ' }

// validKey reports whether key is acceptable on a text line: 1 to
// store.MaxKeyLen bytes. As in memcached, any byte but the separator may be
// part of it, control characters included (protocol.txt asks clients not to
// send them, but memcached takes them, and clients such as libmemcached's
// memcaslap put them in every key). A NUL cannot occur: the line ends at
// the first one, as memcached's C-string tokenizer ends it. Binary-protocol
// and base64 meta keys are raw bytes and only have their length checked.
func validKey(key []byte) bool {
	return len(key) > 0 && len(key) <= store.MaxKeyLen
}
