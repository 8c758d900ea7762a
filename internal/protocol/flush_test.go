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
	env.StartUnix = time.Now().Unix() - 5 // stats reads the wall clock
	_, st := parseStats(t, drive(t, NewSession(env), []byte("stats\r\n")).out)
	if up := st["uptime"]; up != "7" && up != "8" { // a second may tick
		t.Errorf("uptime %s 5 s after the start, want memcached's 7", up)
	}
}
