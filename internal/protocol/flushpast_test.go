package protocol

import (
	"strconv"
	"testing"
	"time"
)

// flush_all with an absolute time in the past: before the server started
// (memcached's process_started, 62 s before its start) it flushes nothing
// and cancels a pending delayed flush; after that, it flushes every item.
func TestFlushAllPastAbsolute(t *testing.T) {
	env := newStillEnv(t)
	now := env.Store.Now()
	env.StartUnix = now - 1000
	s := NewSession(env)
	in := "set a 0 0 1\r\nx\r\nflush_all 10\r\nflush_all " + strconv.FormatInt(now-100000, 10) + "\r\nget a\r\n" +
		"flush_all " + strconv.FormatInt(now-5, 10) + "\r\nget a\r\n"
	want := lines("STORED", "OK", "OK", "VALUE a 0 1", "x", "END", "OK", "END")
	if got := drive(t, s, []byte(in)).out; got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestFlushAllPastAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	now := time.Now().Unix()
	in := "set a 0 0 1\r\nx\r\nflush_all " + strconv.FormatInt(now-100000, 10) + "\r\nget a\r\n" +
		"flush_all " + strconv.FormatInt(now-5, 10) + "\r\nget a\r\n"
	want := lines("STORED", "OK", "VALUE a 0 1", "x", "END", "OK", "END")
	if got := exchange(t, addr, in, len(want)); got.out != want {
		t.Fatalf("memcached: got %q\nwant %q", got.out, want)
	}
}
