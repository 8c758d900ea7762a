package bench

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestKeySpace(t *testing.T) {
	ks, err := NewKeySpace(5000, FBKey)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range ks.Records() {
		k := string(ks.AppendKey(nil, i))
		if len(k) != ks.Len(i) || len(k) < 1 || len(k) > MaxKeyLen {
			t.Fatalf("key %d = %q: length %d, Len %d", i, k, len(k), ks.Len(i))
		}
		if strings.ContainsAny(k, " \r\n\t") {
			t.Fatalf("key %d = %q holds whitespace", i, k)
		}
		if seen[k] {
			t.Fatalf("key %d = %q repeats", i, k)
		}
		seen[k] = true
	}
	again, _ := NewKeySpace(5000, FBKey)
	for i := range 5000 {
		if !bytes.Equal(ks.AppendKey(nil, i), again.AppendKey(nil, i)) {
			t.Fatalf("key %d differs between two key spaces", i)
		}
	}
	short, _ := NewKeySpace(100000, Fixed{Value: 2})
	if got := string(short.AppendKey(nil, 12345)); got != "12345" {
		t.Errorf("a 2-byte key for record 12345 = %q, want the undistorted index", got)
	}
	if got := string(short.AppendKey(nil, 7)); got != "07" {
		t.Errorf("record 7 with 2-byte keys = %q, want 07", got)
	}
	if _, err := NewKeySpace(0, FBKey); err == nil {
		t.Error("an empty key space built without error")
	}
}

func TestEncoders(t *testing.T) {
	ks, _ := NewKeySpace(100, Fixed{Value: 4})
	if got := string(AppendGet(nil, ks, 42)); got != "get 0042\r\n" {
		t.Errorf("AppendGet = %q", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if got := string(AppendMultiGet(nil, ks, 42, 1, rng)); got != "get 0042\r\n" {
		t.Errorf("AppendMultiGet of 1 key = %q", got)
	}
	if got := strings.Fields(string(AppendMultiGet(nil, ks, 42, 5, rng))); len(got) != 6 || got[0] != "get" || got[1] != "0042" {
		t.Errorf("AppendMultiGet of 5 keys = %q", got)
	}
	if got := string(AppendSet(nil, ks, 3, 5)); got != "set 0003 0 0 5\r\nabcde\r\n" {
		t.Errorf("AppendSet = %q", got)
	}
	if got := string(AppendSet([]byte("x"), ks, 3, 0)); got != "xset 0003 0 0 0\r\n\r\n" {
		t.Errorf("AppendSet of an empty value = %q", got)
	}
}

func TestParseReply(t *testing.T) {
	tests := []struct {
		in   string
		kind ReplyKind
		n    int // 0: incomplete
		err  bool
	}{
		{"END\r\n", ReplyMiss, 5, false},
		{"END\r\nSTORED\r\n", ReplyMiss, 5, false},
		{"STORED\r\n", ReplyStored, 8, false},
		{"NOT_STORED\r\n", ReplyNotStored, 12, false},
		{"EXISTS\r\n", ReplyNotStored, 8, false},
		{"NOT_FOUND\r\n", ReplyNotStored, 11, false},
		{"ERROR\r\n", ReplyError, 7, false},
		{"CLIENT_ERROR bad data chunk\r\n", ReplyClientError, 29, false},
		{"SERVER_ERROR object too large for cache\r\n", ReplyServerError, 41, false},
		{"VALUE k 0 3\r\nabc\r\nEND\r\n", ReplyHit, 23, false},
		{"VALUE k 7 3 99\r\nabc\r\nEND\r\nEND\r\n", ReplyHit, 26, false},
		{"VALUE k 0 0\r\n\r\nEND\r\n", ReplyHit, 20, false},
		{"VALUE k 0 3\r\na\r\n\r\nEND\r\n", ReplyHit, 23, false}, // the value is "a\r\n"
		{"VALUE k 0 3\r\nabcd\r\nEND\r\n", 0, 0, true},
		// multigets: any number of values, then one END
		{"VALUE a 0 1\r\nx\r\nVALUE b 0 2\r\nyz\r\nEND\r\n", ReplyHit, 38, false},
		{"VALUE a 0 1\r\nx\r\nVALUE b 0 2\r\nyz\r\nEND\r\nEND\r\n", ReplyHit, 38, false},
		{"VALUE a 0 1\r\nx\r\nVAL", 0, 0, false},
		{"VALUE a 0 1\r\nx\r\nVALUE b 0 2\r\ny", 0, 0, false},
		{"VALUE a 0 1\r\nx\r\nVALUE b 0\r\n", 0, 0, true},
		{"VALUE a 0 1\r\nx\r\nSTORED\r\n", 0, 0, true},
		{"VALUE a 0 1\r\nx\r\nXY", 0, 0, true},
		{"", 0, 0, false},
		{"EN", 0, 0, false},
		{"END\r", 0, 0, false},
		{"VALUE k 0 3\r\nab", 0, 0, false},
		{"VALUE k 0 3\r\nabc\r\nEN", 0, 0, false},
		{"VALUE k 0 3\r\nabcXY", 0, 0, true},
		{"VALUE k 0 3\r\nabc\r\nEXD\r\n", 0, 0, true},
		{"VALUE k 0\r\n", 0, 0, true},
		{"VALUE k x 3\r\nabc\r\nEND\r\n", 0, 0, true},
		{"VALUE k 0 -3\r\n", 0, 0, true},
		{"HELLO\r\n", 0, 0, true},
		{"end\r\n", 0, 0, true},
		{strings.Repeat("x", maxReplyLine+1), 0, 0, true},
	}
	for _, tt := range tests {
		kind, n, err := ParseReply([]byte(tt.in))
		if tt.err {
			if !errors.Is(err, ErrMalformedReply) {
				t.Errorf("ParseReply(%q) = %v, %d, %v; want ErrMalformedReply", tt.in, kind, n, err)
			}
			continue
		}
		if err != nil || kind != tt.kind || n != tt.n {
			t.Errorf("ParseReply(%q) = %v, %d, %v; want %v, %d", tt.in, kind, n, err, tt.kind, tt.n)
		}
	}
}

// Every prefix of a valid reply stream parses as incomplete, never as an
// error or a different reply.
func TestParseReplyPrefixes(t *testing.T) {
	for _, full := range []string{"VALUE 0042 0 5 1\r\nabcde\r\nEND\r\n",
		"VALUE 0042 0 5\r\nabcde\r\nVALUE 7 0 0\r\n\r\nEND\r\n"} {
		prefixes(t, full)
	}
}

func prefixes(t *testing.T, full string) {
	for i := range len(full) {
		if kind, n, err := ParseReply([]byte(full[:i])); err != nil || n != 0 {
			t.Fatalf("prefix %q: %v, %d, %v", full[:i], kind, n, err)
		}
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"END\r\n", "STORED\r\n", "VALUE k 0 3\r\nabc\r\nEND\r\n", "SERVER_ERROR out of memory\r\n",
		"VALUE k 0 3 9\r\nabc\r\nEND\r\nEND\r\n", "VALUE k 0 99999999999\r\n", "ERROR\r\nEND\r\n",
		"VALUE a 0 1\r\nx\r\nVALUE b 0 2\r\nyz\r\nEND\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, n, err := ParseReply(b)
		switch {
		case err != nil:
			if n != 0 || kind != 0 {
				t.Fatalf("error %v with kind %v n %d", err, kind, n)
			}
		case n == 0:
			if kind != 0 {
				t.Fatalf("incomplete with kind %v", kind)
			}
		default:
			if n > len(b) || !bytes.HasSuffix(b[:n], crlf) {
				t.Fatalf("reply length %d of %d bytes does not end a line", n, len(b))
			}
			// The same reply must parse identically with trailing bytes.
			k2, n2, err2 := ParseReply(append(b[:n:n], "END\r\n"...))
			if err2 != nil || k2 != kind || n2 != n {
				t.Fatalf("with a following reply: %v %d %v, alone: %v %d", k2, n2, err2, kind, n)
			}
		}
	})
}

func BenchmarkAppendGet(b *testing.B) {
	ks, _ := NewKeySpace(1000000, FBKey)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendGet(buf[:0], ks, i%1000000)
	}
}

func BenchmarkAppendSet(b *testing.B) {
	ks, _ := NewKeySpace(1000000, FBKey)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendSet(buf[:0], ks, i%1000000, 200)
	}
}

func BenchmarkParseReply(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"miss", "END\r\n"},
		{"stored", "STORED\r\n"},
		{"hit200", "VALUE 000000000000000000000000012345 0 200\r\n" + strings.Repeat("v", 200) + "\r\nEND\r\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := []byte(bc.in)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, n, err := ParseReply(in); n != len(in) || err != nil {
					b.Fatal(n, err)
				}
			}
		})
	}
}

func BenchmarkRecordReply(b *testing.B) {
	s := connStats{get: newLatencyHistogram(), set: newLatencyHistogram()}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.record(pending{sched: 0, set: i%32 == 0}, ReplyMiss+ReplyKind(i%32/31)*2, int64(50000+i%1000))
	}
}

func BenchmarkSampleFBValue(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	for b.Loop() {
		_ = clampSize(Sample(FBValue{}, r), 0, 1<<20)
	}
}
