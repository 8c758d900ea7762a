package store

import (
	"strconv"
	"strings"
	"testing"
)

// referenceCounter is parseCounter written the slow, obvious way, following
// C's strtoull plus memcached's checks, for the fuzzer to compare against.
func referenceCounter(v string) (uint64, bool) {
	rest := strings.TrimLeft(v, " \t\n\v\f\r")
	neg := strings.HasPrefix(rest, "-")
	if neg || strings.HasPrefix(rest, "+") {
		rest = rest[1:]
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	if end == 0 {
		return 0, false
	}
	if end < len(rest) && !strings.ContainsRune(" \t\n\v\f\r\x00", rune(rest[end])) {
		return 0, false
	}
	n, err := strconv.ParseUint(rest[:end], 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
		if int64(n) < 0 {
			return 0, false
		}
	}
	return n, true
}

func FuzzParseCounter(f *testing.F) {
	for _, seed := range []string{
		"0", "42", "18446744073709551615", "18446744073709551616", "  7", "12 abc",
		"-0", "-1", "+9", "0x10", "", " ", "1\x00", "00000000000000000000001",
		"-18446744073709551615", "9\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		got, ok := parseCounter(v)
		want, wantOK := referenceCounter(string(v))
		if got != want || ok != wantOK {
			t.Fatalf("parseCounter(%q) = %d, %v; reference %d, %v", v, got, ok, want, wantOK)
		}
	})
}
