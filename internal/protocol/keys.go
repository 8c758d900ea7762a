package protocol

import (
	"encoding/binary"
	"math/bits"

	"github.com/gocached/gocached/internal/store"
)

// The key rules, in one place: every parser (text, meta, binary) asks these
// two functions, so the protocols cannot drift apart on what a key is.

// isSep reports whether c ends a token, and so a key, on a text or meta
// command line. memcached splits on ' ' only: a tab or a control character
// is part of the token.
func isSep(c byte) bool { return c == sep }

const sep = ' '

// nextToken returns the bounds of the first token (a key, on a retrieval's
// line) in line at or after i, or start == len(line) when none is left.
// The text-line scanners go through it (tokenize writes it out, to stay
// free of calls).
func nextToken(line []byte, i int) (start, end int) {
	for i < len(line) && isSep(line[i]) {
		i++
	}
	return i, tokenEnd(line, i)
}

// tokenEnd returns the offset of the first separator in line at or after i,
// or len(line). It compares eight bytes at a time: keys run to 250 bytes and
// a pipelined get's line is scanned more than once, where a compare and
// branch per byte was a fifth of the get's user time (bytes.IndexByte, a
// call, costs more than it saves on the short tokens most lines hold).
func tokenEnd(line []byte, i int) int {
	for ; i+8 <= len(line); i += 8 {
		// A zero byte of x is a separator; the lowest bit the test leaves
		// is exact (a borrow only marks bytes above a real zero).
		x := binary.LittleEndian.Uint64(line[i:]) ^ sepBytes
		if t := (x - lowBits) &^ x & highBits; t != 0 {
			return i + bits.TrailingZeros64(t)>>3
		}
	}
	for i < len(line) && !isSep(line[i]) {
		i++
	}
	return i
}

const (
	sepBytes = 0x0101010101010101 * sep
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

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
