//go:build linux

package reactor

import (
	"net"
	"runtime"
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
			rt := NewNAPIRouter(ids)
			for i, s := range tc.steps {
				if got := rt.Route(s.self, s.id); got != s.want {
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

func TestAutoReactorsFallsBackToGOMAXPROCS(t *testing.T) {
	for _, ips := range [][]net.IP{{nil}, {net.ParseIP("127.0.0.1")}, {net.ParseIP("::1")}, {net.ParseIP("127.0.0.1"), net.ParseIP("::1")}} {
		if n, dev := AutoReactors(ips); n != runtime.GOMAXPROCS(0) || dev != "" {
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
