package protocol

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// casField matches the unique of a gets/gats VALUE line; uniques depend on
// the store's history, so comparisons replace them with "C".
var casField = regexp.MustCompile(`^(VALUE [^ \r\n]+ [0-9]+ [0-9]+) [0-9]+$`)

// normalizeCAS rewrites the uniques of every VALUE header in a reply. It skips
// value bodies by their declared length, so large replies stay cheap.
func normalizeCAS(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		i := strings.Index(s, "\r\n")
		if i < 0 {
			b.WriteString(s)
			break
		}
		line := s[:i]
		s = s[i+2:]
		if !strings.HasPrefix(line, "VALUE ") {
			b.WriteString(line + "\r\n")
			continue
		}
		f := strings.Fields(line)
		b.WriteString(casField.ReplaceAllString(line, "$1 C") + "\r\n")
		if len(f) >= 4 {
			if n, err := strconv.Atoi(f[3]); err == nil && n >= 0 && n+2 <= len(s) {
				b.WriteString(s[:n+2])
				s = s[n+2:]
			}
		}
	}
	return b.String()
}

func checkResult(t testing.TB, sc script, got result, how string) {
	t.Helper()
	if g, w := normalizeCAS(got.out), sc.want; g != w {
		t.Errorf("%s: %s\n got: %q\nwant: %q", sc.name, how, abbrev(g), abbrev(w))
	}
	if got.closed != sc.closed {
		t.Errorf("%s: %s: closed = %v, want %v", sc.name, how, got.closed, sc.closed)
	}
}

func abbrev(s string) string {
	if len(s) > 600 {
		return s[:300] + "..." + s[len(s)-300:]
	}
	return s
}

func TestScripts(t *testing.T) {
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			checkResult(t, sc, runScript(t, sc.in), "whole")
		})
	}
}

// TestScriptsSplit feeds every script split at every byte (small scripts) or
// at random points (large ones): the replies must not change.
func TestScriptsSplit(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			in := []byte(sc.in)
			var cuts []int
			if len(in) <= 1024 {
				for i := 1; i < len(in); i++ {
					cuts = append(cuts, i)
				}
			} else {
				// Large scripts cost much per run (under -race especially).
				n := 20
				if len(in) > 1<<16 {
					n = 4
				}
				for range n {
					cuts = append(cuts, 1+rng.IntN(len(in)-1))
				}
				// Around the line length limit, where the rules change.
				for i := MaxLineLen - 2; i <= MaxLineLen+6 && i < len(in); i++ {
					cuts = append(cuts, i)
				}
			}
			whole := driveFresh(t, newSmallEnv, in)
			for _, i := range cuts {
				got := driveFresh(t, newSmallEnv, in[:i], in[i:])
				if cutsMayDiffer(got, whole) {
					continue // the whole run is checked (TestScripts)
				}
				checkResult(t, sc, got, "split at "+strconv.Itoa(i))
				if t.Failed() {
					return
				}
			}
			if len(in) <= 8192 {
				chunks := make([][]byte, len(in))
				for i := range in {
					chunks[i] = in[i : i+1]
				}
				if got := driveFresh(t, newSmallEnv, chunks...); !cutsMayDiffer(got, whole) {
					checkResult(t, sc, got, "byte by byte")
				}
			}
		})
	}
}

// TestPipelined sends all scripts that keep the connection open back to back
// on one session, separated by flush_all, as one buffer.
func TestPipelined(t *testing.T) {
	var in, want strings.Builder
	for _, sc := range scripts {
		if sc.closed || sc.own || strings.Contains(sc.in, "flush_all") || len(sc.in) > 1<<16 ||
			strings.HasSuffix(sc.name, "waits") {
			continue
		}
		// mn flushes: an error that culls the unflushed replies (a get's
		// bad key) takes only its own script's.
		in.WriteString("flush_all\r\nmn\r\n" + sc.in)
		want.WriteString("OK\r\nMN\r\n" + sc.want)
	}
	got := runScript(t, in.String())
	if normalizeCAS(got.out) != want.String() || got.closed {
		t.Fatalf("pipelined replies differ (closed=%v)\n got: %q\nwant: %q", got.closed, abbrev(got.out), abbrev(want.String()))
	}
}

func TestCASRoundTrip(t *testing.T) {
	s := NewSession(newSmallEnv(t))
	r := drive(t, s, []byte("set a 0 0 1\r\nx\r\ngets a\r\n"))
	m := regexp.MustCompile(`VALUE a 0 1 ([0-9]+)\r\n`).FindStringSubmatch(r.out)
	if m == nil {
		t.Fatalf("no gets reply in %q", r.out)
	}
	r = drive(t, s, []byte("cas a 7 0 1 "+m[1]+"\r\ny\r\ncas a 0 0 1 "+m[1]+"\r\nz\r\nget a\r\n"))
	if want := lines("STORED", "EXISTS", "VALUE a 7 1", "y", "END"); r.out != want {
		t.Fatalf("got %q, want %q", r.out, want)
	}
}

// TestReqsPerEvent checks that Process stops after -R requests with Yield and
// continues where it stopped.
func TestReqsPerEvent(t *testing.T) {
	env := newTestEnv(t)
	env.Settings.ReqsPerEvent = 3
	s := NewSession(env)
	in := []byte(strings.Repeat("version\r\n", 7))
	var out []byte
	var yields int
	for {
		n, o, st := s.Process(in, out)
		out, in = o, in[n:]
		if st == Yield {
			yields++
			if got := bytes.Count(out, []byte("VERSION")); got != 3*yields {
				t.Fatalf("after %d yields: %d replies", yields, got)
			}
			continue
		}
		if st != NeedMore || len(in) != 0 {
			t.Fatalf("status %v with %d bytes left", st, len(in))
		}
		break
	}
	if yields != 2 || bytes.Count(out, []byte("VERSION")) != 7 {
		t.Fatalf("yields=%d replies=%q", yields, out)
	}
}

func TestWant(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"set a 0 0 10\r\n", 14 + 12},
		{"set a 0 0 10\r\n12345", 14 + 12},
		{"get a", 0},
		{"version\r\nset a 0 0 100\r\n", 15 + 102},
		{"get " + strings.Repeat("k ", 1500), 8192}, // twice its 3004 bytes, up to a power of two
	}
	for _, tt := range tests {
		scoped(t, func(t testing.TB) {
			s := NewSession(newSmallEnv(t))
			n, _, st := s.Process([]byte(tt.in), nil)
			if st != NeedMore {
				t.Errorf("%q: status %v", tt.in, st)
			}
			if got := s.Want(); got != tt.want {
				t.Errorf("%q: consumed %d, Want() = %d, want %d", abbrev(tt.in), n, got, tt.want)
			}
		})
	}
}

// TestSwallowAcrossCalls feeds an oversized value in small reads: the session
// must drop it as it arrives, never asking for a buffer that large.
func TestSwallowAcrossCalls(t *testing.T) {
	s := NewSession(newSmallEnv(t))
	head := []byte("set big 0 0 3000000\r\n")
	n, out, st := s.Process(head, nil)
	if n != len(head) || st != NeedMore || string(out) != lines("SERVER_ERROR object too large for cache") {
		t.Fatalf("head: n=%d st=%v out=%q", n, st, out)
	}
	chunk := bytes.Repeat([]byte("v"), 4096)
	left := 3000002
	for left > 0 {
		c := chunk[:min(len(chunk), left)]
		n, out, st = s.Process(c, out[:0])
		if n != len(c) || len(out) != 0 || st != NeedMore || s.Want() > 4096 {
			t.Fatalf("swallow: n=%d out=%q st=%v want=%d", n, out, st, s.Want())
		}
		left -= len(c)
	}
	_, out, _ = s.Process([]byte("get big\r\n"), nil)
	if string(out) != "END\r\n" {
		t.Fatalf("after swallow: %q", out)
	}
}

// TestBinaryPartialHeader: a binary header is waited for until it is whole,
// and only a connection's first byte selects the binary protocol.
func TestBinaryPartialHeader(t *testing.T) {
	s := NewSession(newSmallEnv(t))
	n, out, st := s.Process([]byte{0x80}, nil)
	if st != NeedMore || n != 0 || len(out) != 0 || s.Want() != binaryHeaderLen {
		t.Fatalf("n=%d st=%v out=%x want=%d", n, st, out, s.Want())
	}
	// After text, 0x80 is just a bad command byte.
	s.Reset()
	r := drive(t, s, []byte("version\r\n\x80x\r\n"))
	if r.closed || r.out != lines("VERSION 1.6.18", "ERROR") {
		t.Fatalf("got %+v", r)
	}
}

func TestReset(t *testing.T) {
	s := NewSession(newSmallEnv(t))
	s.Process([]byte("set a 0 0 5000000\r\nvvv"), nil)
	s.Reset()
	_, out, st := s.Process([]byte("version\r\n"), nil)
	if st != NeedMore || string(out) != lines("VERSION 1.6.18") {
		t.Fatalf("after Reset: %q %v", out, st)
	}
}

func TestNumberParsing(t *testing.T) {
	u32 := []struct {
		in string
		v  uint32
		ok bool
	}{
		{"0", 0, true}, {"+7", 7, true}, {"-0", 0, true}, {"-1", 0, false}, {"4294967296", 0, true},
		{"18446744073709551615", 4294967295, true}, {"18446744073709551616", 0, false}, {"1x", 0, false},
		{"1\t", 1, true}, {"1\tjunk", 1, true}, {"\t2", 2, true}, {"", 0, false}, {"+", 0, false},
		{"-18446744073709551615", 1, true},
	}
	for _, tt := range u32 {
		if v, ok := parseUint32([]byte(tt.in)); v != tt.v || ok != tt.ok {
			t.Errorf("parseUint32(%q) = %d, %v; want %d, %v", tt.in, v, ok, tt.v, tt.ok)
		}
	}
	i32 := []struct {
		in string
		v  int32
		ok bool
	}{
		{"-1", -1, true}, {"2147483648", -2147483648, true}, {"4294967297", 1, true},
		{"9223372036854775807", -1, true}, {"9223372036854775808", 0, false},
		{"-9223372036854775808", 0, true}, {"-9223372036854775809", 0, false}, {"x", 0, false},
	}
	for _, tt := range i32 {
		if v, ok := parseInt32([]byte(tt.in)); v != tt.v || ok != tt.ok {
			t.Errorf("parseInt32(%q) = %d, %v; want %d, %v", tt.in, v, ok, tt.v, tt.ok)
		}
	}
}

// TestMultigetOutputBudget: a multiget whose reply is far larger than the
// output budget goes out over several Process calls, each bounded, and the
// reply is the same as in one piece.
func TestMultigetOutputBudget(t *testing.T) {
	s := NewSession(newSmallEnv(t))
	value := strings.Repeat("v", 300_000)
	drive(t, s, []byte("set big 0 0 300000\r\n"+value+"\r\n"))
	in := []byte("get" + strings.Repeat(" big", 20) + " nope\r\nversion\r\n")
	want := strings.Repeat("VALUE big 0 300000\r\n"+value+"\r\n", 20) + "END\r\nVERSION 1.6.18\r\n"
	var out []byte
	calls := 0
	for {
		n, o, st := s.Process(in, nil)
		calls++
		if len(o) > OutputBudget+len(value)+64 {
			t.Fatalf("call %d produced %d bytes", calls, len(o))
		}
		out, in = append(out, o...), in[n:]
		if st != Yield {
			break
		}
		if n == 0 {
			t.Fatalf("call %d yielded without progress", calls)
		}
	}
	if string(out) != want || len(in) != 0 {
		t.Fatalf("reply differs (len %d, want %d), %d bytes left", len(out), len(want), len(in))
	}
	if calls < 5 {
		t.Fatalf("reply of %d bytes sent in %d calls", len(out), calls)
	}
}
