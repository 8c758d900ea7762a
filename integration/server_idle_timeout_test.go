package integration

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIdleTimeoutKicksOnlyIdle: memcached's -o idle_timeout closes only
// connections waiting for a command: a client partway through a value
// finishes its set however slowly, a watcher keeps streaming, and the
// kick of an idle client is logged to `watch connevents` as
// reason=idle_timeout. Every engine as memcached.
func TestIdleTimeoutKicksOnlyIdle(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		p := startServer(t, tg, "-o", "idle_timeout=1")
		events := dialRaw(t, p.Addr())
		events.expect("watch connevents mutations\r\n", "OK\r\n")

		slow := dialRaw(t, p.Addr())
		slow.send("set slow 0 0 10\r\nabc")
		idle := dialRaw(t, p.Addr())
		idle.send("mn\r\n")
		if l := idle.line(); l != "MN\r\n" {
			t.Fatalf("mn: %q", l)
		}
		// The idle client's kick shows a sweep has run past the timeout;
		// the slow one, idle longer, was looked at by it and must stay.
		idle.expectClosed("")
		slow.send("defghij\r\n")
		if l := slow.line(); l != "STORED\r\n" {
			t.Errorf("a set idle mid-value: %q, want STORED", l)
		}

		// The watcher outlived the timeout too: it logs the slow set and
		// the idle client's kick, in either order.
		var kicked, stored bool
		var got []string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !(kicked && stored); {
			l := events.line() // fails the test if nothing comes
			got = append(got, l)
			kicked = kicked || strings.Contains(l, "type=conn_close") && strings.Contains(l, "reason=idle_timeout")
			stored = stored || strings.Contains(l, "type=item_store") && strings.Contains(l, "key=slow")
		}
		if !kicked || !stored {
			t.Errorf("watcher lines %q: want the idle kick (reason=idle_timeout) and the slow set", got)
		}
	})
}

// TestResetLoggedAsError: a client that resets its connection (SO_LINGER
// 0) is logged to `watch connevents` with reason=error, one that closes it
// with reason=normal. Every engine as memcached.
func TestResetLoggedAsError(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		p := startServer(t, tg)
		events := dialRaw(t, p.Addr())
		events.expect("watch connevents\r\n", "OK\r\n")
		for _, tc := range []struct {
			reset  bool
			reason string
		}{{false, "reason=normal"}, {true, "reason=error"}} {
			c := dialRaw(t, p.Addr())
			if l := c.roundTrip("mn\r\n"); l != "MN\r\n" {
				t.Fatalf("mn: %q", l)
			}
			port := c.conn.LocalAddr().(*net.TCPAddr).Port
			if tc.reset {
				c.conn.(*net.TCPConn).SetLinger(0)
			}
			c.conn.Close()
			want := "rport=" + strconv.Itoa(port) + " "
			for {
				l := events.line() // fails the test if nothing comes
				if strings.Contains(l, "type=conn_close") && strings.Contains(l, want) {
					if !strings.Contains(l, tc.reason) {
						t.Errorf("reset=%v: %q, want %s", tc.reset, l, tc.reason)
					}
					break
				}
			}
		}
	})
}
