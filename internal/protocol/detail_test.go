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
