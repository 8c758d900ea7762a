package protocol

import (
	"strconv"
	"testing"
	"time"
)

// TestStatsOldest: `stats settings`' oldest is memcached's oldest_live, the
// last flush_all's time in its relative clock (62 s at start): the flush's
// second less one with CAS on, that second itself under -C, a delay
// added, 0 before any flush; and uptime starts at 2, as memcached's.
func TestStatsOldest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noCAS  bool
		script string
		want   func(rel int64) int64
	}{
		{"none", false, "", func(int64) int64 { return 0 }},
		{"flush_all", false, "flush_all\r\n", func(rel int64) int64 { return rel - 1 }},
		{"delayed", false, "flush_all 100\r\n", func(rel int64) int64 { return rel + 99 }},
		{"delayed then plain", false, "flush_all 100\r\nflush_all 0\r\n", func(rel int64) int64 { return rel - 1 }},
		{"-C", true, "flush_all\r\n", func(rel int64) int64 { return rel }},
		{"before process_started", false, "flush_all 2592001\r\n", func(int64) int64 { return 0 }},
	} {
		scoped(t, func(t testing.TB) {
			env := newStillEnv(t)
			env.Settings.CASEnabled = !tc.noCAS
			env.StartUnix = env.Store.Now() - 5 // started 5 s ago: memcached's clock reads 67
			c := NewSession(env)
			drive(t, c, []byte(tc.script))
			_, st := parseStats(t, drive(t, c, []byte("stats settings\r\n")).out)
			if got, want := st["oldest"], strconv.FormatInt(tc.want(67), 10); got != want {
				t.Errorf("%s: oldest %s, want %s", tc.name, got, want)
			}
		})
	}
	env := newStillEnv(t)
	before := time.Now().Unix()
	env.StartUnix = before - 5 // stats reads the wall clock
	_, st := parseStats(t, drive(t, NewSession(env), []byte("stats\r\n")).out)
	// memcached's 7, plus the seconds that passed (on a loaded machine,
	// maybe several) between the start and the stats.
	lo, hi := 7, 7+time.Now().Unix()-before
	if up, err := strconv.ParseInt(st["uptime"], 10, 64); err != nil || up < int64(lo) || up > hi {
		t.Errorf("uptime %s 5 s after the start, want memcached's 7 (to %d, seconds having passed)", st["uptime"], hi)
	}
}

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
