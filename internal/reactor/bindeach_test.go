package reactor

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
)

// TestBindEach: memcached's per-entry rules, with a bind that fails as the
// table says for an address:port and otherwise gets port 4000+n for -p 0.
func TestBindEach(t *testing.T) {
	v4, v6 := net.IPv4zero.To4(), net.IPv6unspecified
	lo4, lo6 := net.ParseIP("127.0.0.1").To4(), net.ParseIP("::1")
	for _, tc := range []struct {
		name    string
		binds   []Binding
		fail    map[string]error // "ip port" -> error
		bound   string           // what bound, in order
		wantErr error
	}{
		{"wildcard", []Binding{{IP: v4, Port: 11211}, {IP: v6, Port: 11211}}, nil,
			"0.0.0.0 11211,:: 11211", nil},
		{"wildcard, IPv4 port taken: IPv6 alone", []Binding{{IP: v4, Port: 11211}, {IP: v6, Port: 11211}},
			map[string]error{"0.0.0.0 11211": syscall.EADDRINUSE}, ":: 11211", nil},
		{"wildcard, IPv6 port taken: IPv4 alone", []Binding{{IP: v4, Port: 11211}, {IP: v6, Port: 11211}},
			map[string]error{":: 11211": syscall.EADDRINUSE}, "0.0.0.0 11211", nil},
		{"wildcard, both taken", []Binding{{IP: v4, Port: 11211}, {IP: v6, Port: 11211}},
			map[string]error{"0.0.0.0 11211": syscall.EADDRINUSE, ":: 11211": syscall.EADDRINUSE}, "", syscall.EADDRINUSE},
		{"no IPv6 on the host", []Binding{{IP: v4, Port: 11211}, {IP: v6, Port: 11211}},
			map[string]error{":: 11211": syscall.EAFNOSUPPORT}, "0.0.0.0 11211", nil},
		{"IPv4 taken and no IPv6: nothing bound", []Binding{{IP: v4, Port: 11211}, {IP: v6, Port: 11211}},
			map[string]error{"0.0.0.0 11211": syscall.EADDRINUSE, ":: 11211": syscall.EAFNOSUPPORT}, "", syscall.EADDRINUSE},
		{"one entry of two taken", []Binding{{IP: lo4, Port: 11211, Entry: 0}, {IP: lo6, Port: 11212, Entry: 1}},
			map[string]error{"::1 11212": syscall.EADDRINUSE}, "127.0.0.1 11211", syscall.EADDRINUSE},
		{"another error is fatal", []Binding{{IP: v4, Port: 11211}, {IP: v6, Port: 11211}},
			map[string]error{"0.0.0.0 11211": syscall.EACCES}, "", syscall.EACCES},
		{"port 0 shared within an entry only", []Binding{{IP: lo4}, {IP: lo6}, {IP: lo4, Entry: 1}}, nil,
			"127.0.0.1 0,::1 4001,127.0.0.1 0", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bound []string
			n := 0
			err := BindEach(tc.binds, func(b Binding) (int, error) {
				key := fmt.Sprintf("%s %d", b.IP, b.Port)
				if err := tc.fail[key]; err != nil {
					return 0, fmt.Errorf("bind %s: %w", key, err)
				}
				bound = append(bound, key)
				n++
				if b.Port == 0 {
					return 4000 + n, nil
				}
				return b.Port, nil
			})
			if got := strings.Join(bound, ","); got != tc.bound {
				t.Errorf("bound %q, want %q", got, tc.bound)
			}
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}
