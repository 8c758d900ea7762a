package integration

import (
	"strings"
	"testing"
)

// TestStatsSizes drives memcached's item size histogram on every engine and
// on memcached itself, which answers exactly these lines: tracking is
// -o track_sizes' alone (memcached 1.6.25 removed `stats sizes_enable` and
// `sizes_disable`, now unknown groups), sizes are memcached's item sizes
// rounded up to 32 bytes, and -C leaves out the CAS field.
func TestStatsSizes(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Run("run time", func(t *testing.T) {
			c := dialRaw(t, startServer(t, tg).Addr())
			c.expect("set a 0 0 10\r\n0123456789\r\n", "STORED\r\n")
			c.expect("stats sizes\r\n", "STAT sizes_status disabled\r\n", "END\r\n")
			c.expect("stats sizes_enable\r\n", "ERROR\r\n")
			c.expect("set bb 0 0 5\r\nhello\r\n", "STORED\r\n")
			c.expect("stats sizes\r\n", "STAT sizes_status disabled\r\n", "END\r\n")
			c.expect("stats sizes_disable\r\n", "ERROR\r\n")
			if got := c.stats("settings")["track_sizes"]; got != "no" {
				t.Errorf("track_sizes %q, want no", got)
			}
		})
		t.Run("track_sizes", func(t *testing.T) {
			c := dialRaw(t, startServer(t, tg, "-o", "track_sizes").Addr())
			c.expect("set a 0 0 10\r\n0123456789\r\n", "STORED\r\n")
			c.expect("set big 0 0 5000\r\n"+strings.Repeat("b", 5000)+"\r\n", "STORED\r\n")
			c.expect("stats sizes\r\n", "STAT 96 1\r\n", "STAT 5088 1\r\n", "END\r\n")
		})
		t.Run("no cas, track_sizes", func(t *testing.T) {
			c := dialRaw(t, startServer(t, tg, "-C", "-o", "track_sizes").Addr())
			c.expect("set a 0 0 10\r\n0123456789\r\n", "STORED\r\n") // no CAS field: 62
			c.expect("stats sizes\r\n", "STAT 64 1\r\n", "END\r\n")
		})
	})
}
