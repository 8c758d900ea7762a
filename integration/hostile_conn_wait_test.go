package integration

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConnLimitWaits: with -o no_maxconns_fast a client beyond -c is not
// refused, as in memcached: it is not served while -c clients are, then is
// served once one leaves; `stats` has no rejected_connections and counts
// the pauses in listen_disabled_num and time_in_listen_disabled_us.
// memcached counts its own descriptors against -c, so only gocached's
// engines are held to the exact number.
func TestConnLimitWaits(t *testing.T) {
	const limit = 6
	forEachEngine(t, func(t *testing.T, tg target) {
		t.Parallel()
		srv := startServer(t, tg, "-c", strconv.Itoa(limit), "-o", "no_maxconns_fast")
		conns := fillConns(t, srv.Addr(), limit)
		waiting := dialRaw(t, srv.Addr()) // the kernel completes the handshake
		waiting.send("version\r\n")
		if got, err := waiting.readUntil("\r\n", 500*time.Millisecond); err == nil || got != "" {
			t.Fatalf("client beyond -c: got %q (%v), want no reply while it waits", got, err)
		}
		if st := conns[1].stats(""); st["listen_disabled_num"] == "0" || st["rejected_connections"] != "" {
			t.Errorf("stats while one waits: listen_disabled_num %q, rejected_connections %q; want pauses counted and no rejected_connections",
				st["listen_disabled_num"], st["rejected_connections"])
		}
		conns[0].conn.Close()
		if got, err := waiting.readUntil("\r\n", 10*time.Second); err != nil || !strings.HasPrefix(got, "VERSION ") {
			t.Fatalf("after a client left: %q (%v), want the waiting client served", got, err)
		}
		for i, c := range conns[1:] {
			if got := c.roundTrip("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
				t.Fatalf("connection %d afterwards: %q", i+2, got)
			}
		}
		// The pauses before the waiting client was let in are time spent
		// with accepting off (at least the 500 ms it waited, in pauses that
		// have ended).
		if us, _ := strconv.Atoi(conns[1].stats("")["time_in_listen_disabled_us"]); us < 100_000 {
			t.Errorf("time_in_listen_disabled_us %d after a client waited 500 ms", us)
		}
	})
}
