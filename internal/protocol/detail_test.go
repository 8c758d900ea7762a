package protocol

import (
	"strings"
	"testing"
)

func TestCrawlerStartsCounted(t *testing.T) {
	env := newSmallEnv(t)
	s := NewSession(env)
	drive(t, s, []byte("lru_crawler crawl 1\r\nlru_crawler crawl 0\r\n"))
	drive(t, s, []byte("lru_crawler metadump all\r\n"))
	if out := drive(t, s, []byte("stats\r\n")).out; !strings.Contains(out, "STAT lru_crawler_starts 2\r\n") {
		t.Fatalf("stats: %q", abbrev(out))
	}
	drive(t, s, []byte("stats reset\r\n"))
	if out := drive(t, s, []byte("stats\r\n")).out; !strings.Contains(out, "STAT lru_crawler_starts 0\r\n") {
		t.Fatal("stats reset kept lru_crawler_starts")
	}
}

// TestBinaryDetail: the binary protocol's gets, sets and deletes count in
// the prefix stats, and its STAT detail dump returns them.
func TestBinaryDetail(t *testing.T) {
	env := newSmallEnv(t)
	env.Settings.DetailDelimiter = ':'
	in := binReq(opSet, "p:1", strings.Repeat("\x00", 8), "v", 0, 0) + binReq(opGet, "p:1", "", "", 0, 0) +
		binReq(opGet, "p:2", "", "", 0, 0) + binReq(opDelete, "p:1", "", "", 0, 0)
	drive(t, NewSession(env), []byte(in))
	got := string(env.appendDetailDump(nil))
	if got != "PREFIX p get 2 hit 1 set 1 del 1\r\nEND\r\n" {
		t.Fatalf("dump: %q", got)
	}
	out := drive(t, NewSession(env), []byte(binReq(opStat, "detail dump", "", "", 0, 0))).out
	if !strings.Contains(out, "detailedPREFIX p get 2 hit 1 set 1 del 1\r\nEND\r\n") {
		t.Fatalf("binary STAT detail dump: %q", out)
	}
}

// TestDetailDumpOrderFollowsHashAlgorithm: memcached 1.6.18 buckets the
// prefixes by its hash_algorithm, so after gets of a:1 b:1 c:1 x:1 k:1
// foo:1 with `stats detail on` it dumps b x foo c a k by default (murmur3)
// and a c b foo x k under -o no_modern (jenkins).
func TestDetailDumpOrderFollowsHashAlgorithm(t *testing.T) {
	for _, tc := range []struct{ algo, want string }{
		{"", "b x foo c a k"},
		{"murmur3", "b x foo c a k"},
		{"jenkins", "a c b foo x k"},
	} {
		env := newSmallEnv(t)
		if tc.algo != "" {
			tu := DefaultTuning()
			tu.HashAlgorithm = tc.algo
			env.Settings.Tuning = &tu
		}
		s := NewSession(env)
		drive(t, s, []byte("stats detail on\r\nget a:1 b:1 c:1 x:1 k:1 foo:1\r\n"))
		var got []string
		for _, l := range strings.Split(drive(t, s, []byte("stats detail dump\r\n")).out, "\r\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "PREFIX" {
				got = append(got, f[1])
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("hash_algorithm %q: dump order %q, want %q", tc.algo, g, tc.want)
		}
	}
}

// memcached's jenkins_hash (lookup3 hashlittle, initval 0) on lookup3's
// published checks.
func TestJenkinsHash(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0xdeadbeef},
		{"Four score and seven years ago", 0x17770551},
	} {
		if got := jenkins(tc.in); got != tc.want {
			t.Errorf("jenkins(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}
