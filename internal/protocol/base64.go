package protocol

import "encoding/base64"

// Base64 keys for the meta protocol's b flag.
//
// Encoding is standard base64 with padding. Decoding follows memcached's
// decoder rather than Go's strict one, because a key that memcached accepts
// must name the same item here: bytes outside the alphabet are skipped, the
// remaining characters must be a nonzero multiple of four, and the first
// block holding '=' padding ends the key (one or two pad characters drop one
// or two bytes; more is an error).

// b64Value maps a byte to its 6-bit value, '=' to 0, and anything else to
// b64Skip.
var b64Value = func() (t [256]byte) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range t {
		t[i] = b64Skip
	}
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	t['='] = 0
	return t
}()

const b64Skip = 0x80

// decodeBase64Key appends the decoded src to dst. It reports false (and an
// empty key) where memcached's decoder returns 0.
func decodeBase64Key(dst, src []byte) ([]byte, bool) {
	count := 0
	for _, c := range src {
		if b64Value[c] != b64Skip {
			count++
		}
	}
	if count == 0 || count%4 != 0 {
		return dst[:0], false
	}
	var block [4]byte
	n, pad := 0, 0
	for _, c := range src {
		v := b64Value[c]
		if v == b64Skip {
			continue
		}
		if c == '=' {
			pad++
		}
		block[n] = v
		n++
		if n < 4 {
			continue
		}
		dst = append(dst, block[0]<<2|block[1]>>4, block[1]<<4|block[2]>>2, block[2]<<6|block[3])
		n = 0
		if pad > 0 {
			if pad > 2 {
				return dst[:0], false
			}
			dst = dst[:len(dst)-pad]
			break
		}
	}
	return dst, len(dst) > 0
}

// appendBase64 appends the standard encoding of src.
func appendBase64(dst, src []byte) []byte {
	return base64.StdEncoding.AppendEncode(dst, src)
}
