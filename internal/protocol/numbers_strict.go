package protocol

// The number rules of memcached's command parser from 1.6.40 on (its
// vendored mcmc token converters): a token is digits only, a signed one may
// start with '-', nothing else is accepted (no '+', no whitespace, no
// trailing junk), a value out of the field's range is an error rather than
// truncated, and a token longer than 11 (32-bit fields) or 22 (64-bit
// fields) characters is refused outright. The storage commands' flags and
// exptime keep the older strtoul/strtol rules (tokens.go): 1.6.45 still
// parses those two with them.

const (
	strict32MaxLen = 11
	strict64MaxLen = 22
)

// parseStrictUint64 is mcmc_toktou64.
func parseStrictUint64(b []byte) (uint64, bool) {
	if len(b) > strict64MaxLen {
		return 0, false
	}
	return strictDigits(b, ^uint64(0))
}

// parseStrictUint32 is mcmc_toktou32.
func parseStrictUint32(b []byte) (uint32, bool) {
	if len(b) > strict32MaxLen {
		return 0, false
	}
	v, ok := strictDigits(b, 1<<32-1)
	return uint32(v), ok
}

// parseStrictInt32 is mcmc_tokto32: a lone "-" reads as 0, as there.
func parseStrictInt32(b []byte) (int32, bool) {
	if len(b) > strict32MaxLen {
		return 0, false
	}
	if len(b) > 0 && b[0] == '-' {
		v, ok := strictDigits(b[1:], 1<<31)
		return int32(-int64(v)), ok
	}
	v, ok := strictDigits(b, 1<<31-1)
	return int32(v), ok
}

// strictDigits reads b as decimal digits whose value must not exceed max.
func strictDigits(b []byte, max uint64) (uint64, bool) {
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (max-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
