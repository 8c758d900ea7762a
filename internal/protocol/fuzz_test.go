package protocol

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
)

// volatileStat matches stats whose values change between two runs, or
// with how the input was split (the connection memory pools, connmem.go).
var volatileStat = regexp.MustCompile(`STAT (pid|uptime|time|rusage_user|rusage_system|response_obj_count|response_obj_bytes|read_buf_count|read_buf_bytes|read_buf_bytes_free) [^\r]*`)

func canonical(r result) result {
	r.out = volatileStat.ReplaceAllString(normalizeCAS(r.out), "STAT $1 x")
	return r
}

// maxFuzzInput bounds fuzz inputs: minimizing a long input re-runs it
// thousands of times, which stalls the fuzzer.
const maxFuzzInput = 256

func addSeeds(f *testing.F) {
	for _, sc := range scripts {
		if len(sc.in) <= maxFuzzInput {
			f.Add([]byte(sc.in), uint16(len(sc.in)/2))
		}
	}
	f.Add([]byte("set a 0 0 5\r\nhello\r\nget a a\r\nincr a 1\r\nstats\r\nquit\r\n"), uint16(9))
	f.Add([]byte("set a 0 0 10000000\r\nxyz\r\nget a\r\n"), uint16(3))
}

// FuzzProcess feeds arbitrary bytes whole and in pieces: Process must never
// panic or misreport what it consumed, and the replies must not depend on how
// the input was split.
func FuzzProcess(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		if len(data) > maxFuzzInput {
			return // long inputs only slow the fuzzer down; tests cover them
		}
		whole := canonical(drive(t, NewSession(newTinyEnv(t)), data))
		i := int(cut) % (len(data) + 1)
		split := canonical(drive(t, NewSession(newTinyEnv(t)), data[:i], data[i:]))
		if !cutsMayDiffer(split, whole) && split != whole {
			t.Fatalf("split at %d changed the replies\nwhole: %+v\nsplit: %+v", i, whole, split)
		}
		size := int(cut)%7 + 1
		var chunks [][]byte
		for rest := data; len(rest) > 0; rest = rest[min(size, len(rest)):] {
			chunks = append(chunks, rest[:min(size, len(rest))])
		}
		if chunked := canonical(drive(t, NewSession(newTinyEnv(t)), chunks...)); !cutsMayDiffer(chunked, whole) && chunked != whole {
			t.Fatalf("chunks of %d changed the replies\nwhole:   %+v\nchunked: %+v", size, whole, chunked)
		}
	})
}

// FuzzTokenize checks the tokenizer against a plain split on spaces.
func FuzzTokenize(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte, _ uint16) {
		s := NewSession(newTinyEnv(t))
		n := s.text.tokenize(line)
		fields := bytes.FieldsFunc(line, func(r rune) bool { return r == ' ' })
		if len(fields) >= maxTokens {
			if n != maxTokens {
				t.Fatalf("%q: %d fields, tokenize = %d", line, len(fields), n)
			}
			return
		}
		if n != len(fields) {
			t.Fatalf("%q: %d fields, tokenize = %d", line, len(fields), n)
		}
		for i := range n {
			if !bytes.Equal(s.text.token(line, i), fields[i]) {
				t.Fatalf("%q: token %d = %q, want %q", line, i, s.text.token(line, i), fields[i])
			}
		}
	})
}

// FuzzParseNumbers checks the strtol-style parsers against strconv on the
// inputs both understand, and that they never accept what strconv rejects
// once C whitespace and signs are accounted for.
func FuzzParseNumbers(f *testing.F) {
	for _, s := range []string{"0", "1", "-1", "+5", "4294967296", "18446744073709551615",
		"18446744073709551616", "-9223372036854775808", "12\tx", " 7", "x", ""} {
		f.Add([]byte(s), uint16(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, _ uint16) {
		u64, okU := parseUint64(b)
		i32, okI := parseInt32(b)
		u32, okU32 := parseUint32(b)
		if okU32 != okU || (okU && u32 != uint32(u64)) {
			t.Fatalf("%q: parseUint32 = %d,%v; parseUint64 = %d,%v", b, u32, okU32, u64, okU)
		}
		// Plain decimal digits: strconv is the oracle.
		if len(b) > 0 && bytes.Trim(b, "0123456789") == nil {
			v, err := strconv.ParseUint(string(b), 10, 64)
			if (err == nil) != okU || (okU && v != u64) {
				t.Fatalf("%q: parseUint64 = %d,%v; strconv = %d,%v", b, u64, okU, v, err)
			}
			w, err := strconv.ParseInt(string(b), 10, 64)
			if (err == nil) != okI || (okI && int32(w) != i32) {
				t.Fatalf("%q: parseInt32 = %d,%v; strconv = %d,%v", b, i32, okI, w, err)
			}
		}
	})
}
