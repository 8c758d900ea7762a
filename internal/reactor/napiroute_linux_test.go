//go:build linux

package reactor

import (
	"net"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
)

func TestNAPIRouter(t *testing.T) {
	type step struct {
		self int
		id   uint32
		want int
	}
	tests := []struct {
		name     string
		reactors int
		steps    []step
		owners   []uint32 // reactors' ids at the end
	}{
		{"id 0 stays", 2, []step{{0, 0, 0}, {1, 0, 1}}, []uint32{0, 0}},
		{"first sight claims", 2, []step{{1, 7, 1}, {0, 7, 1}, {0, 9, 0}, {1, 9, 0}}, []uint32{9, 7}},
		{"owner of another id hands to an idle reactor", 3,
			[]step{{0, 5, 0}, {0, 6, 1}, {0, 8, 2}, {2, 6, 1}}, []uint32{5, 6, 8}},
		{"more NAPIs than reactors stay where accepted", 2,
			[]step{{0, 1, 0}, {0, 2, 1}, {1, 3, 1}, {0, 3, 0}}, []uint32{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := make([]*atomic.Uint32, tc.reactors)
			for i := range ids {
				ids[i] = new(atomic.Uint32)
			}
			rt := newNAPIRouter(ids)
			for i, s := range tc.steps {
				if got := rt.route(s.self, s.id); got != s.want {
					t.Errorf("step %d: reactor %d accepted id %d: routed to %d, want %d", i, s.self, s.id, got, s.want)
				}
			}
			for i, want := range tc.owners {
				if got := ids[i].Load(); got != want {
					t.Errorf("reactor %d owns id %d, want %d", i, got, want)
				}
			}
		})
	}
}

func TestParseListen(t *testing.T) {
	tests := []struct {
		listen string
		port   int
		want   []string // ip:port, "" ip for wildcard
		bad    bool
	}{
		{"", 11211, []string{":11211"}, false},
		{"127.0.0.1", 5, []string{"127.0.0.1:5"}, false},
		{"0.0.0.0", 5, []string{":5"}, false},
		{"127.0.0.1:99,::1", 5, []string{"127.0.0.1:99", "[::1]:5"}, false},
		{"[::1]:7", 5, []string{"[::1]:7"}, false},
		{"cache.test", 5, []string{"10.0.0.9:5"}, false}, // IPv4 preferred
		{"v6only.test:8", 5, []string{"[fd00::1]:8"}, false},
		{"127.0.0.1:x", 5, nil, true},
		{"127.0.0.1:70000", 5, nil, true},
		{"127.0.0.1,", 5, nil, true},
		{"", 65536, nil, true},
		{"unknown.test", 5, nil, true},
	}
	for _, tc := range tests {
		specs, err := parseListenWith(tc.listen, tc.port, fakeLookup)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.listen)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.listen, err)
			continue
		}
		var got []string
		for _, s := range specs {
			host := ""
			if s.ip != nil {
				host = s.ip.String()
			}
			got = append(got, net.JoinHostPort(host, itoa(s.port)))
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: %v, want %v", tc.listen, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %v, want %v", tc.listen, got, tc.want)
			}
		}
	}
}

// fakeLookup resolves a few names without touching the network.
func fakeLookup(host string) ([]net.IP, error) {
	switch host {
	case "cache.test":
		return []net.IP{net.ParseIP("fd00::9"), net.ParseIP("10.0.0.9")}, nil
	case "v6only.test":
		return []net.IP{net.ParseIP("fd00::1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// FuzzParseListen checks that no -l value panics and that every spec it
// accepts carries a valid port.
func FuzzParseListen(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1", "127.0.0.1:99,::1", "[::1]:7", "cache.test", "0.0.0.0", ",,", "[", "a:b:c", "[::1]x:1"} {
		f.Add(s, 11211)
	}
	f.Fuzz(func(t *testing.T, listen string, port int) {
		specs, err := parseListenWith(listen, port, fakeLookup)
		if err != nil {
			return
		}
		if len(specs) == 0 {
			t.Fatalf("%q: no error and no specs", listen)
		}
		for _, s := range specs {
			if s.port < 0 || s.port > 65535 {
				t.Fatalf("%q: port %d", listen, s.port)
			}
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestAutoReactorsFallsBackToGOMAXPROCS(t *testing.T) {
	for _, ips := range [][]net.IP{{nil}, {net.ParseIP("127.0.0.1")}, {net.ParseIP("::1")}, {net.ParseIP("127.0.0.1"), net.ParseIP("::1")}} {
		if n, dev := autoReactors(ips); n != runtime.GOMAXPROCS(0) || dev != "" {
			t.Errorf("%v: %d reactors on %q, want GOMAXPROCS=%d and no interface", ips, n, dev, runtime.GOMAXPROCS(0))
		}
	}
}

func TestRxQueueCountLoopback(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo interface")
	}
	if n := rxQueueCount(lo); n < 1 {
		t.Errorf("lo has %d RX queues by rtnetlink/sysfs, want >= 1", n)
	}
}
