package protocol

// Tokenizing and number parsing with memcached's exact acceptance rules.
//
// memcached splits a command line on ' ' only (a tab is part of a token), keeps
// at most maxTokens-1 tokens, and parses numbers with strtol/strtoul-style
// helpers: leading C whitespace and a sign are accepted, the digits may be
// followed by any C whitespace character (and anything after it), and the
// 64-bit result is then truncated to the field's width. Clients depend on
// these quirks only by accident, but replies must match byte for byte, so the
// rules are reproduced here rather than "cleaned up".

// maxTokens mirrors memcached's MAX_TOKENS: at most maxTokens-1 real tokens are
// split off; the rest of the line stays unsplit.
const maxTokens = 24

// span is a token's [start, end) in the command line.
type span struct{ start, end int32 }

// textCommand is the text (or meta) command line being answered: its
// tokens, and whether it asked for noreply.
type textCommand struct {
	tokens  [maxTokens]span
	noreply bool
}

// reset prepares the state for a new connection: the tokens are rewritten
// by every line.
func (t *textCommand) reset() { t.noreply = false }

// token returns the i-th token of line.
func (t *textCommand) token(line []byte, i int) []byte {
	return line[t.tokens[i].start:t.tokens[i].end]
}

// setNoreply mirrors memcached's set_noreply_maybe: the last token decides,
// which on a line of more tokens than memcached splits is the last one
// split (n is maxTokens then; see tokenize).
func (t *textCommand) setNoreply(line []byte, n int) {
	if n >= 2 && string(t.token(line, min(n, maxTokens-1)-1)) == "noreply" {
		t.noreply = true
	}
}

// seenFlag reports whether a flag token starting with c is on the line.
func (t *textCommand) seenFlag(line []byte, n int, c byte) bool {
	for i := 2; i < n; i++ {
		if line[t.tokens[i].start] == c {
			return true
		}
	}
	return false
}

// tokenize splits line on spaces into t.tokens and returns the number of real
// tokens (memcached's ntokens minus its terminal token). When the line has
// more than maxTokens-1 tokens, it returns maxTokens so that every fixed-arity
// command rejects it, as memcached does.
func (t *textCommand) tokenize(line []byte) int {
	n := 0
	for i := 0; ; n++ {
		// nextToken, written out: it is too big to inline, and every
		// command line passes here.
		for i < len(line) && isSep(line[i]) {
			i++
		}
		if i == len(line) {
			return n
		}
		if n == maxTokens-1 {
			return maxTokens
		}
		end := tokenEnd(line, i)
		t.tokens[n] = span{int32(i), int32(end)}
		i = end
	}
}

// isCSpace reports whether c is whitespace to C's isspace in the C locale.
func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// parseDigits reads strtoull-style: optional C whitespace, optional sign,
// decimal digits. It returns the magnitude, whether a '-' was seen, and ok
// false when there are no digits, the magnitude overflows 64 bits, or the
// digits are followed by something other than whitespace or the token's end.
func parseDigits(b []byte) (v uint64, neg, ok bool) {
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		d := uint64(b[i] - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false, false // ERANGE
		}
		v = v*10 + d
		i++
	}
	if i == start {
		return 0, false, false
	}
	if i < len(b) && !isCSpace(b[i]) {
		return 0, false, false
	}
	return v, neg, true
}

// parseUint64 behaves like memcached's safe_strtoull.
func parseUint64(b []byte) (uint64, bool) {
	v, neg, ok := parseDigits(b)
	if !ok {
		return 0, false
	}
	if neg {
		v = -v
		// strtoull negates; memcached rejects the result only when it looks
		// negative as a signed number.
		if int64(v) < 0 {
			return 0, false
		}
	}
	return v, true
}

// parseUint32 behaves like memcached's safe_strtoul on a 64-bit system: the
// unsigned long result is truncated to 32 bits.
func parseUint32(b []byte) (uint32, bool) {
	v, ok := parseUint64(b)
	return uint32(v), ok
}

// parseInt32 behaves like memcached's safe_strtol on a 64-bit system: strtol
// must not overflow a long, and the result is then truncated to 32 bits.
func parseInt32(b []byte) (int32, bool) {
	v, neg, ok := parseDigits(b)
	if !ok {
		return 0, false
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int32(-int64(v)), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int32(int64(v)), true
}
