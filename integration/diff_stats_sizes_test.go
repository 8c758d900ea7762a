package integration

import (
	"strings"
	"testing"
)

// TestStatsSizes drives memcached's item size histogram on every engine and
// on memcached itself, which answers exactly these lines: an item older
// than `stats sizes_enable` is never counted, sizes are memcached's item
// sizes rounded up to 32 bytes, the switches answer with no END, -C
// refuses the run-time switch but -o track_sizes counts from the start.
func TestStatsSizes(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Run("run time", func(t *testing.T) {
			c := dialRaw(t, startServer(t, tg).Addr())
			c.expect("set a 0 0 10\r\n0123456789\r\n", "STORED\r\n")
			c.expect("stats sizes\r\n", "STAT sizes_status disabled\r\n", "END\r\n")
			if got := c.stats("settings")["track_sizes"]; got != "no" {
				t.Errorf("track_sizes %q before enabling, want no", got)
			}
			c.expect("stats sizes_enable\r\n", "STAT sizes_status enabled\r\n")
			c.expect("set bb 0 0 5\r\nhello\r\n", "STORED\r\n")
			c.expect("set a 0 0 3\r\nabc\r\n", "STORED\r\n")
			c.expect("set n 0 0 2\r\n99\r\n", "STORED\r\n")
			c.expect("incr n 1\r\n", "100\r\n")
			c.expect("stats sizes\r\n", "STAT 64 2\r\n", "STAT 96 1\r\n", "END\r\n")
			c.expect("delete bb\r\n", "DELETED\r\n")
			c.expect("stats sizes\r\n", "STAT 64 2\r\n", "END\r\n")
			if got := c.stats("settings")["track_sizes"]; got != "yes" {
				t.Errorf("track_sizes %q while enabled, want yes", got)
			}
			c.expect("stats sizes_enable\r\n", "STAT sizes_status enabled\r\n")
			c.expect("stats sizes_disable\r\n", "STAT sizes_status disabled\r\n")
			c.expect("stats sizes\r\n", "STAT sizes_status disabled\r\n", "END\r\n")
			// The connection reads on after the END-less replies.
			if got := c.roundTrip("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
				t.Errorf("version after the switches: %q", got)
			}
		})
		t.Run("track_sizes", func(t *testing.T) {
			c := dialRaw(t, startServer(t, tg, "-o", "track_sizes").Addr())
			c.expect("set a 0 0 10\r\n0123456789\r\n", "STORED\r\n")
			c.expect("set big 0 0 5000\r\n"+strings.Repeat("b", 5000)+"\r\n", "STORED\r\n")
			c.expect("stats sizes\r\n", "STAT 96 1\r\n", "STAT 5088 1\r\n", "END\r\n")
		})
		t.Run("no cas", func(t *testing.T) {
			c := dialRaw(t, startServer(t, tg, "-C").Addr())
			c.expect("stats sizes_enable\r\n", "STAT sizes_status error\r\n", "STAT sizes_error cas_support_disabled\r\n")
			c.expect("stats sizes\r\n", "STAT sizes_status disabled\r\n", "END\r\n")
		})
		t.Run("no cas, track_sizes", func(t *testing.T) {
			c := dialRaw(t, startServer(t, tg, "-C", "-o", "track_sizes").Addr())
			c.expect("set a 0 0 10\r\n0123456789\r\n", "STORED\r\n") // no CAS field: 62
			c.expect("stats sizes\r\n", "STAT 64 1\r\n", "END\r\n")
		})
	})
}
