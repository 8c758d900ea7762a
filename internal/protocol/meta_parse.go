package protocol

import "github.com/gocached/gocached/internal/store"

// Meta command line parsing: memcached 1.6's flag rules (single-character
// flags, some with a token glued on, each at most once), its base64 key
// option and its exact error strings. Parsing never touches the store, so a
// command whose flags are bad has no effect.

const (
	// metaMaxTokens mirrors memcached's MFLAG_MAX_OPT_LENGTH: a meta line
	// may have at most this many tokens, the command and key included.
	metaMaxTokens = 20
	// metaMaxOpaque is the longest O token, its 'O' included.
	metaMaxOpaque = 32

	rMetaFlagsTooLong  = "CLIENT_ERROR options flags are too long\r\n"
	rMetaDuplicate     = "CLIENT_ERROR duplicate flag\r\n"
	rMetaInvalidFlag   = "CLIENT_ERROR invalid flag\r\n"
	rMetaBadToken      = "CLIENT_ERROR bad token in command line format\r\n"
	rMetaBadKey        = "CLIENT_ERROR error decoding key\r\n"
	rMetaBadInitial    = "CLIENT_ERROR invalid numeric initial value\r\n"
	rMetaBadDeltaValue = "CLIENT_ERROR invalid numeric delta value\r\n"
	rMetaInvalidOrDup  = "CLIENT_ERROR invalid or duplicate flag\r\n"
	rMetaOpaqueTooLong = "CLIENT_ERROR opaque token too long\r\n"
)

// metaFlags is what a meta command line asks for, once parsed.
type metaFlags struct {
	noUpdate   bool // u
	vivify     bool // N
	value      bool // v
	invalidate bool // I
	quiet      bool // q
	hasCAS     bool // C
	newTTL     bool // T
	keyBinary  bool // b
	recache    bool // R
	removeVal  bool // x (md: keep an empty item rather than delete)
	mode       byte // M's argument, 0 when absent
	ttl        int32
	vivifyTTL  int32
	recacheTTL int32
	flags      uint32       // F
	cas        uint64       // C
	newCAS     store.NewCAS // E
	delta      uint64       // D
	initial    uint64       // J
}

// parseMetaFlags reads the flag tokens from index first on, as memcached's
// _meta_flag_preparse does: a repeated flag or an unknown one stops at once;
// a bad argument is remembered and parsing goes on, so that a later error
// message can replace an earlier one exactly as memcached's does. The key
// (token 1) is base64-decoded into s.meta.key when b is present; otherwise
// s.meta.key is the key token itself. It returns "" on success, else the
// error reply.
func (s *Session) parseMetaFlags(line []byte, n, first int) string {
	f := &s.meta.flags
	*f = metaFlags{}
	s.meta.key = s.text.token(line, 1)
	var seen [128]bool
	failed := false
	errstr := rBadFormat
	for i := first; i < n; i++ {
		tok := s.text.token(line, i)
		c, arg := tok[0], tok[1:]
		if c >= 127 || seen[c] {
			return rMetaDuplicate
		}
		seen[c] = true
		switch c {
		case 'b':
			k, ok := decodeBase64Key(s.meta.keyBuf[:0], s.text.token(line, 1))
			s.meta.keyBuf = k
			s.meta.key = k
			if !ok {
				errstr, failed = rMetaBadKey, true
			}
			f.keyBinary = true
		case 'N', 'T', 'R':
			v, ok := parseStrictInt32(arg)
			ok = ok && len(arg) > 0
			if !ok {
				errstr, failed = rMetaBadToken, true
				break
			}
			switch c {
			case 'N':
				f.vivify, f.vivifyTTL = true, v
			case 'T':
				f.newTTL, f.ttl = true, v
			case 'R':
				f.recache, f.recacheTTL = true, v
			}
		case 'O', 'P', 'L', 'k', 's', 't', 'c', 'f', 'l', 'h':
			// O, P, L carry tokens the reply copies or that proxies use;
			// the others ask for a field in the reply.
		case 'v':
			f.value = true
		case 'u':
			f.noUpdate = true
		case 'q':
			f.quiet = true
		case 'F':
			// memcached keeps its generic message for a bad F.
			v, ok := parseStrictUint32(arg)
			if !ok || len(arg) == 0 {
				failed = true
			}
			f.flags = v
		case 'C':
			v, ok := parseStrictUint64(arg)
			if !ok || len(arg) == 0 {
				errstr, failed = rMetaBadToken, true
				break
			}
			f.hasCAS, f.cas = true, v
		case 'E':
			// Explicit CAS, from memcached 1.6.21 on (1.6.18 refuses E as
			// an invalid flag): the item this command changes or creates
			// gets this CAS instead of a generated one.
			v, ok := parseStrictUint64(arg)
			if !ok || len(arg) == 0 {
				errstr, failed = rMetaBadToken, true
				break
			}
			f.newCAS = store.NewCAS{Value: v, Set: true}
		case 'M':
			// memcached 1.6.40 on takes the byte after the M, whatever the
			// token's length: for a lone M that is the separator, which no
			// mode accepts.
			f.mode = ' '
			if len(arg) > 0 {
				f.mode = arg[0]
			}
		case 'J':
			v, ok := parseStrictUint64(arg)
			if !ok || len(arg) == 0 {
				errstr, failed = rMetaBadInitial, true
			}
			f.initial = v
		case 'D':
			v, ok := parseStrictUint64(arg)
			if !ok || len(arg) == 0 {
				errstr, failed = rMetaBadDeltaValue, true
			}
			f.delta = v
		case 'I':
			f.invalidate = true
		case 'x':
			f.removeVal = true
		default:
			return rMetaInvalidFlag
		}
	}
	if failed {
		return errstr
	}
	return ""
}

// badFlagToken reports whether a token from first on starts with a byte
// memcached's meta tokenizer refuses (1.6.45): neither a digit nor
// in 'A'..'z'. The tokenizer then gives up on the line, which memcached
// answers as a bad command line. It looks at the tokens it splits only.
func (s *Session) badFlagToken(line []byte, n, first int) bool {
	for i := first; i < min(n, maxTokens-1); i++ {
		c := line[s.text.tokens[i].start]
		if !(c >= 'A' && c <= 'z') && !(c >= '0' && c <= '9') {
			return true
		}
	}
	return false
}

// keyOK applies the key rule to a meta key: a key sent as text must be
// a valid text key; a base64 key may hold any bytes, as the b flag exists
// for exactly that.
func (m *metaState) keyOK() bool {
	if m.flags.keyBinary {
		return len(m.key) > 0
	}
	return validKey(m.key)
}

// opaqueTooLong reports whether an O token of the line is longer than
// memcached allows. memcached finds this while writing the reply; checking
// first keeps a rejected command free of side effects.
func (s *Session) opaqueTooLong(line []byte, n, first int) bool {
	for i := first; i < n; i++ {
		if tok := s.text.token(line, i); tok[0] == 'O' && len(tok) > metaMaxOpaque {
			return true
		}
	}
	return false
}

// appendMetaKey writes " k<key>", base64-encoding a binary key and marking
// it with " b", as memcached's meta replies do.
func appendMetaKey(b, key []byte, binary bool) []byte {
	b = append(b, " k"...)
	if !binary {
		return append(b, key...)
	}
	b = appendBase64(b, key)
	return append(b, " b"...)
}

// appendOpaqueAndKey writes the O and k tokens of the request in their order:
// the whole reply of a meta command that found no item.
func (s *Session) appendOpaqueAndKey(b, line []byte, n, first int, key []byte, binary bool) []byte {
	for i := first; i < n; i++ {
		tok := s.text.token(line, i)
		switch tok[0] {
		case 'O':
			b = append(b, ' ')
			b = append(b, tok...)
		case 'k':
			b = appendMetaKey(b, key, binary)
		}
	}
	return b
}
