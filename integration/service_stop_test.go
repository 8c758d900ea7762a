package integration

import (
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopLines: memcached writes "Gracefully stopping" to stderr when
// SIGUSR1 stops it, and "Exiting normally" on SIGTERM with -v; both exit
// 0. Every engine as memcached.
func TestStopLines(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		for _, tc := range []struct {
			sig   syscall.Signal
			flags []string
			line  string
		}{{syscall.SIGUSR1, nil, "Gracefully stopping\n"}, {syscall.SIGTERM, []string{"-v"}, "Exiting normally\n"}} {
			p := startSpec(t, spec(t, tg, append([]string{"-l", "127.0.0.1", "-U", "0"}, tc.flags...)...), true)
			if err := syscall.Kill(p.Pid(), tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.Done():
			case <-time.After(15 * time.Second):
				t.Fatalf("%v: still running after 15 s", tc.sig)
			}
			if err := p.Stop(0); err != nil {
				t.Errorf("%v: %v", tc.sig, err)
			}
			if out := p.Output(); !strings.Contains(out, tc.line) {
				t.Errorf("%v: stderr %q lacks %q", tc.sig, out, tc.line)
			}
		}
	})
}

// TestSIGTERM: the server exits 0 on SIGTERM with clients connected, and
// the clients see their connections closed.
func TestSIGTERM(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		srv := startServer(t, tg)
		idle := dialRaw(t, srv.Addr())
		busy := dialRaw(t, srv.Addr())
		busy.expect(set("set", "a", 0, 0, "1"), "STORED\r\n")
		if got := idle.roundTrip("version\r\n"); !strings.HasPrefix(got, "VERSION ") {
			t.Fatalf("version: %q", got)
		}
		start := time.Now()
		if err := srv.Stop(0); err != nil {
			t.Fatalf("after SIGTERM: %v, want exit status 0", err)
		}
		t.Logf("exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
		idle.expectClosed("")
		if c, err := net.DialTimeout("tcp", srv.Addr(), time.Second); err == nil {
			c.Close()
			t.Fatalf("still accepting after exit")
		}
	})
}
