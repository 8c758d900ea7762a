//go:build linux

package epoll

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/gocached/gocached/internal/reactor"
	"golang.org/x/net/bpf"
)

// The x/net VM has no ancillary loads, so the test swaps the queue load for a
// load of the first packet word and feeds queue_mapping values through it.
func runSteering(t *testing.T, n int, zeroIsQueue bool, queue uint32) uint32 {
	t.Helper()
	prog, err := reuseportSteering(n, zeroIsQueue)
	if err != nil {
		t.Fatal(err)
	}
	if prog[0] != (bpf.LoadExtension{Num: bpf.ExtQueue}) {
		t.Fatalf("first instruction %v, want the SKF_AD_QUEUE load", prog[0])
	}
	prog[0] = bpf.LoadAbsolute{Off: 0, Size: 4}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	pkt := make([]byte, 64)
	binary.BigEndian.PutUint32(pkt, queue)
	// VM.Run returns min(ret, len(pkt)); use the raw return instead.
	out, err := vm.Run(pkt)
	if err != nil {
		t.Fatal(err)
	}
	if out == len(pkt) {
		return reuseportFallback
	}
	return uint32(out)
}

func TestReuseportSteering(t *testing.T) {
	tests := []struct {
		n           int
		zeroIsQueue bool   // listening on one device: queue 0 is real (veth)
		queue       uint32 // queue_mapping
		want        uint32
	}{
		{4, false, 0, reuseportFallback}, // loopback: spread by hash
		{4, false, 1, 1},
		{4, false, 4, 0},
		{4, false, 6, 2}, // more queues than reactors wrap around
		{4, true, 0, 0},  // veth queue 0
		{4, true, 3, 3},
		{4, true, 9, 1},
		{1, true, 3, 0},
		{3, false, 7, 1},
	}
	for _, tc := range tests {
		if got := runSteering(t, tc.n, tc.zeroIsQueue, tc.queue); got != tc.want {
			t.Errorf("n=%d zeroIsQueue=%t queue_mapping=%d: listener %#x, want %#x", tc.n, tc.zeroIsQueue, tc.queue, got, tc.want)
		}
	}
	if _, err := reuseportSteering(0, true); err == nil {
		t.Error("group size 0 accepted")
	}
}

func TestReuseportSteeringAssembles(t *testing.T) {
	for n := 1; n <= 64; n *= 2 {
		for _, z := range []bool{false, true} {
			prog, _ := reuseportSteering(n, z)
			if _, err := bpf.Assemble(prog); err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
		}
	}
}

func TestAttachReuseportSteering(t *testing.T) {
	g, err := openListenGroup(reactor.Binding{IP: net.IPv4(127, 0, 0, 1).To4()}, 3, 16, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	// openListenGroup attached it already; attaching again replaces the program.
	if err := attachReuseportSteering(g.fds[1], 3, false); err != nil {
		t.Fatalf("SO_ATTACH_REUSEPORT_CBPF: %v", err)
	}
	if g.addr.Port == 0 {
		t.Fatal("port 0 was not resolved")
	}
}
