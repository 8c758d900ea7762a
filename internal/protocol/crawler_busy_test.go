package protocol

import (
	"fmt"
	"strings"
	"testing"
)

// TestMetadumpOneAtATime: memcached has one LRU crawler, so while a
// metadump streams to one client another client's metadump or crawl
// answers BUSY; the crawler is free again once the dump has ended, or once
// its client has gone mid-dump.
func TestMetadumpOneAtATime(t *testing.T) {
	env := newTestEnv(t)
	env.ResumesPending = true
	var load strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&load, "set key%06d 0 0 1 noreply\r\nx\r\n", i)
	}
	drive(t, NewSession(env), []byte(load.String()))

	a := NewSession(env)
	// One Process call: the dump stops at the output budget, pending.
	if _, out, st := a.Process([]byte("lru_crawler metadump all\r\n"), nil); st == Close || !a.Pending() || len(out) == 0 {
		t.Fatalf("the dump did not stay pending (status %v, %d bytes)", st, len(out))
	}
	b := NewSession(env)
	busy := lines("BUSY currently processing crawler request")
	for _, cmd := range []string{"lru_crawler metadump all\r\n", "lru_crawler metadump 1\r\n", "lru_crawler crawl all\r\n"} {
		if got := drive(t, b, []byte(cmd)); got.out != busy {
			t.Errorf("%q during another dump: %q, want %q", cmd, got.out, busy)
		}
	}
	// Bad classes are refused before the crawler is asked, as in memcached.
	if got := drive(t, b, []byte("lru_crawler metadump 0\r\n")); got.out != lines("BADCLASS invalid class id") {
		t.Errorf("bad class during a dump: %q", got.out)
	}
	a.Reset() // its client went away mid-dump
	if got := drive(t, b, []byte("lru_crawler metadump all\r\n")); !strings.HasSuffix(got.out, "END\r\n") {
		t.Errorf("after the first dump's client left, a dump gives %d bytes ending %q", len(got.out), got.out[max(0, len(got.out)-20):])
	}
	// That dump ran to its END: the crawler is free.
	if got := drive(t, NewSession(env), []byte("lru_crawler crawl all\r\n")); got.out != lines("OK") {
		t.Errorf("crawl after a finished dump: %q", got.out)
	}
	// A Session dropped after a panic (the engine calls Abandon, not
	// Reset) frees the crawler too.
	c := NewSession(env)
	if _, _, _ = c.Process([]byte("lru_crawler metadump all\r\n"), nil); !c.Pending() {
		t.Fatal("the third dump did not stay pending")
	}
	c.Abandon()
	if got := drive(t, NewSession(env), []byte("lru_crawler crawl all\r\n")); got.out != lines("OK") {
		t.Errorf("crawl after an abandoned dump: %q", got.out)
	}
}
