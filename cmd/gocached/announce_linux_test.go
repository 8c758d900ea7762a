//go:build linux

package main

import (
	"regexp"
	"strconv"
	"testing"
)

// TestAnnounceListeners: with -vv every engine names each listening socket
// by descriptor, as memcached does ("<23 server listening (auto-negotiate)",
// "<24 server listening (udp)"), with the -B binding in parentheses; a UDP
// socket has a descriptor per thread, each named.
func TestAnnounceListeners(t *testing.T) {
	tcp := regexp.MustCompile(`(?m)^<\d+ server listening \((auto-negotiate|ascii|binary)\)$`)
	udp := regexp.MustCompile(`(?m)^<\d+ server listening \(udp\)$`)
	for _, engine := range []string{"epoll", "go", "uring"} {
		t.Run(engine, func(t *testing.T) {
			port, err := freeTCPPort()
			if err != nil {
				t.Fatal(err)
			}
			s := startServer(t, "-vv", "--engine="+engine, "-B", "ascii", "-U", strconv.Itoa(port), "-t", "3")
			log := s.stderr.String()
			if m := tcp.FindAllString(log, -1); len(m) != 1 || m[0][len(m[0])-7:] != "(ascii)" {
				t.Errorf("TCP listener lines %q, want one ending (ascii); log:\n%s", m, log)
			}
			if m := udp.FindAllString(log, -1); len(m) != 3 {
				t.Errorf("UDP listener lines %q, want one per thread (-t 3); log:\n%s", m, log)
			}
		})
	}
}
