package reactor

import (
	"net"
	"slices"
	"strconv"
	"testing"
)

func TestCommonListenAddrs(t *testing.T) {
	tests := []struct {
		listen  string
		port    int
		want    []string
		wantErr bool
	}{
		{"", 11211, []string{":11211"}, false},
		{"127.0.0.1", 11211, []string{"127.0.0.1:11211"}, false},
		{"127.0.0.1,10.0.0.1", 5, []string{"127.0.0.1:5", "10.0.0.1:5"}, false},
		{" 127.0.0.1 , ::1 ", 7, []string{"127.0.0.1:7", "[::1]:7"}, false},
		{"127.0.0.1:9000", 11211, []string{"127.0.0.1:9000"}, false},
		{"[::1]:9000,[fe80::1]", 1, []string{"[::1]:9000", "[fe80::1]:1"}, false},
		{"localhost", 0, []string{"localhost:0"}, false},
		{"127.0.0.1,", 1, nil, true},
		{"127.0.0.1:99999", 1, nil, true},
		{"127.0.0.1:abc", 1, nil, true},
		{"[::1", 1, nil, true},
		{"]", 1, nil, true},
		{"a b", 1, nil, true},
		{"", 70000, nil, true},
	}
	for _, tt := range tests {
		got, err := commonListenAddrs(tt.listen, tt.port)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("commonListenAddrs(%q, %d) = %q, %v; want %q, err=%v", tt.listen, tt.port, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCommonAddrString(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 11211}, "tcp:127.0.0.1:11211"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, "tcp6:[::1]:80"},
		{nil, "unknown"},
	}
	for _, tt := range tests {
		if got := commonAddrString(tt.addr); got != tt.want {
			t.Errorf("commonAddrString(%v) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

// FuzzCommonListenAddrs checks that every address accepted is one
// net.SplitHostPort takes apart, with a valid port.
func FuzzCommonListenAddrs(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1", "127.0.0.1,::1", "[::1]:80", "a:b:c", "[", "]", ",", "h:99999", " x , y "} {
		f.Add(s, 11211)
	}
	f.Fuzz(func(t *testing.T, listen string, port int) {
		addrs, err := commonListenAddrs(listen, port)
		if err != nil {
			return
		}
		if len(addrs) == 0 {
			t.Fatalf("commonListenAddrs(%q, %d) = no addresses and no error", listen, port)
		}
		for _, a := range addrs {
			_, p, err := net.SplitHostPort(a)
			if err != nil {
				t.Fatalf("commonListenAddrs(%q, %d) gave %q: %v", listen, port, a, err)
			}
			if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
				t.Fatalf("commonListenAddrs(%q, %d) gave %q with a bad port", listen, port, a)
			}
		}
	})
}
