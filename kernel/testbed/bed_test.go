//go:build linux

package testbed

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gocached/gocached/internal/testproc"
)

// checkBed verifies the shape every bed must have, whoever built it.
func checkBed(t *testing.T, b *Bed) {
	t.Helper()
	if !b.Exists() {
		t.Fatalf("bed %s: namespaces missing", b.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, e := range []struct {
		ns, dev, ip string
		idx         int
	}{{b.ServerNS, b.ServerDev, b.ServerIP, b.ServerIfindex}, {b.ClientNS, b.ClientDev, b.ClientIP, b.ClientIfindex}} {
		rx, tx, err := QueueCounts(e.ns, e.dev)
		if err != nil {
			t.Fatal(err)
		}
		q := b.Variant.Queues
		if rx != q || tx != q {
			t.Errorf("%s/%s: %d rx, %d tx queues in sysfs, want %d each", e.ns, e.dev, rx, tx, q)
		}
		l, err := showLink(e.ns, e.dev)
		if err != nil {
			t.Fatal(err)
		}
		if l.NumRxQueues != q || l.NumTxQueues != q || l.Ifindex != e.idx || e.idx == 0 {
			t.Errorf("%s/%s: netlink says %+v, bed says ifindex %d", e.ns, e.dev, l, e.idx)
		}
		out, err := NSCmd(ctx, e.ns, "ethtool", "-k", e.dev).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"generic-receive-offload: on", "tcp-segmentation-offload: off"} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("%s/%s: ethtool -k lacks %q", e.ns, e.dev, want)
			}
		}
		out, err = testproc.CommandContext(ctx, "ip", "-n", e.ns, "-o", "-4", "addr", "show", "dev", e.dev).Output()
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("inet %s/%d", e.ip, Prefix); !bytes.Contains(out, []byte(want)) {
			t.Errorf("%s/%s: addresses %q lack %q", e.ns, e.dev, out, want)
		}
		out, err = testproc.CommandContext(ctx, "ip", "-n", e.ns, "-o", "link", "show", "lo").Output()
		if err != nil || !bytes.Contains(out, []byte("UP")) {
			t.Errorf("%s: lo not up: %q %v", e.ns, out, err)
		}
	}
	// No address of the bed leaks into the namespace that runs the tests.
	out, err := testproc.CommandContext(ctx, "ip", "-o", "addr").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(b.ServerIP)) || bytes.Contains(out, []byte(b.ClientIP)) {
		t.Errorf("bed address visible outside the namespaces: %s", out)
	}
}

// checkNAPI exchanges bytes over conns connections and checks that every
// accepted socket came in through a veth NAPI.
func checkNAPI(t *testing.T, b *Bed, conns int) []uint32 {
	t.Helper()
	ids, err := b.ObserveNAPIIDs(conns)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != conns {
		t.Fatalf("observed %d connections, want %d", len(ids), conns)
	}
	distinct := map[uint32]int{}
	for i, id := range ids {
		if id == 0 {
			t.Errorf("connection %d: SO_INCOMING_NAPI_ID 0; veth NAPI not active", i)
		}
		distinct[id]++
	}
	// veth picks the peer's rx queue from the sender's tx queue, hashed per
	// flow: 32 flows all on one queue has probability 4^-31.
	lo, hi := 2, b.Variant.Queues
	if hi == 1 {
		lo = 1
	}
	if len(distinct) < lo || len(distinct) > hi {
		t.Errorf("NAPI ids %v: want %d..%d distinct", distinct, lo, hi)
	}
	return ids
}

func TestBedNAPI(t *testing.T) {
	b := Up(t)
	checkBed(t, b)
	ids := checkNAPI(t, b, 32)
	sorted := append([]uint32(nil), ids...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	t.Logf("bed %s: server ifindex %d, NAPI ids of 32 accepted sockets: %v", b.Name, b.ServerIfindex, sorted)
	if _, err := BusyPollRxPackets(b.ServerNS); err != nil {
		t.Fatal(err)
	}
	// The bed's counters are its own: the accepted connections show up in
	// the server namespace's Tcp:PassiveOpens.
	snmp, err := ReadSNMP(b.ServerNS)
	if err != nil {
		t.Fatal(err)
	}
	if got := snmp["Tcp:PassiveOpens"]; got != 32 {
		t.Errorf("server netns Tcp:PassiveOpens = %d, want 32", got)
	}
}

func TestInNS(t *testing.T) {
	b := Up(t)
	var own unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &own); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{b.ServerNS, b.ClientNS} {
		var want unix.Stat_t
		if err := unix.Stat("/var/run/netns/"+ns, &want); err != nil {
			t.Fatal(err)
		}
		var names []string
		err := b.InNS(ns, func() error {
			var in unix.Stat_t
			if err := unix.Stat("/proc/thread-self/ns/net", &in); err != nil {
				return err
			}
			if in.Ino != want.Ino || in.Ino == own.Ino {
				return fmt.Errorf("inside %s: netns inode %d, want %d (own %d)", ns, in.Ino, want.Ino, own.Ino)
			}
			ifs, err := net.Interfaces()
			for _, i := range ifs {
				names = append(names, i.Name)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(names)
		dev := b.ServerDev
		if ns == b.ClientNS {
			dev = b.ClientDev
		}
		wantNames := []string{dev, "lo"}
		sort.Strings(wantNames)
		if strings.Join(names, ",") != strings.Join(wantNames, ",") {
			t.Errorf("interfaces inside %s: %v, want %v", ns, names, wantNames)
		}
	}
	var after unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &after); err != nil || after.Ino != own.Ino {
		t.Fatalf("test goroutine's netns changed: %d -> %d (%v)", own.Ino, after.Ino, err)
	}
	if err := b.InNS("elsewhere", func() error { return nil }); err == nil {
		t.Error("Bed.InNS accepted a foreign namespace")
	}
	if err := InNS(b.Name+"-missing", func() error { return nil }); err == nil {
		t.Error("InNS into a missing namespace succeeded")
	}
	want := fmt.Errorf("from fn")
	if err := InNS(b.ServerNS, func() error { return want }); err != want {
		t.Errorf("InNS returned %v, want fn's error", err)
	}
}

func TestNewIsIdempotentAndCloseTearsDown(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(decide(err, "").reason)
	}
	name := UniqueName()
	b1, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	defer b1.Close()
	before := idSet(checkNAPI(t, b1, 32))
	b2, err := New(name)
	if err != nil {
		t.Fatalf("second New of %s: %v", name, err)
	}
	if !reflect.DeepEqual(b1, b2) {
		t.Errorf("rebuilt bed differs: %+v vs %+v", b1, b2)
	}
	checkBed(t, b2)
	// Re-running setup must not replace the NAPIs (new IDs, reset knobs).
	if after := idSet(checkNAPI(t, b2, 32)); after != before {
		t.Errorf("NAPI ids changed across a second New: %s -> %s", before, after)
	}
	if err := b2.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, name)
	if err := b1.Close(); err != nil {
		t.Fatalf("closing a closed bed: %v", err)
	}
}

// idSet renders the distinct ids, sorted, for comparison.
func idSet(ids []uint32) string {
	seen := map[uint32]bool{}
	var out []uint32
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return fmt.Sprint(out)
}

func assertGone(t *testing.T, name string) {
	t.Helper()
	out, err := testproc.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(name+"-")) {
		t.Fatalf("bed %s still listed after teardown:\n%s", name, out)
	}
	for _, side := range []string{"-srv", "-cli"} {
		if nsExists(name + side) {
			t.Fatalf("/var/run/netns/%s%s still exists", name, side)
		}
	}
}

// The shell script and the Go code must build the same bed.
func TestScriptBuildsSameBed(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(decide(err, "").reason)
	}
	name := UniqueName()
	script := func(args ...string) (string, error) {
		out, err := testproc.Command("../testbed.sh", args...).CombinedOutput()
		return string(out), err
	}
	defer script("down", name)
	for i := 0; i < 2; i++ { // up twice: idempotent
		out, err := script("up", name)
		if err != nil {
			t.Fatalf("testbed.sh up %s (round %d): %v\n%s", name, i, err, out)
		}
		if !strings.Contains(out, "name="+name) || !strings.Contains(out, "rxqueues=4 gro=on tso=off") {
			t.Fatalf("testbed.sh up output:\n%s", out)
		}
	}
	b := &Bed{Name: name, ServerNS: name + "-srv", ClientNS: name + "-cli", Variant: Variant{Queues: Queues},
		ServerDev: ServerDev, ClientDev: ClientDev, ServerIP: ServerIP, ClientIP: ClientIP}
	var err error
	if b.ServerIfindex, err = ifindex(b.ServerNS, b.ServerDev); err != nil {
		t.Fatal(err)
	}
	if b.ClientIfindex, err = ifindex(b.ClientNS, b.ClientDev); err != nil {
		t.Fatal(err)
	}
	checkBed(t, b)
	before := idSet(checkNAPI(t, b, 32))
	if out, err := script("up", name); err != nil {
		t.Fatalf("third testbed.sh up: %v\n%s", err, out)
	}
	if after := idSet(checkNAPI(t, b, 32)); after != before {
		t.Errorf("NAPI ids changed across a repeated up: %s -> %s", before, after)
	}
	if out, err := script("exec", name, "srv", "cat", "/sys/class/net/"+ServerDev+"/ifindex"); err != nil ||
		strings.TrimSpace(out) != fmt.Sprint(b.ServerIfindex) {
		t.Errorf("testbed.sh exec srv: %q %v", out, err)
	}
	for i := 0; i < 2; i++ { // down twice: a missing bed is fine
		if out, err := script("down", name); err != nil {
			t.Fatalf("testbed.sh down %s (round %d): %v\n%s", name, i, err, out)
		}
	}
	assertGone(t, name)
	if out, err := script("status", name); err == nil || !strings.Contains(out, "down") {
		t.Errorf("status of a removed bed: %v\n%s", err, out)
	}
}

func TestFeatureOn(t *testing.T) {
	out := []byte("Features for srv0:\nrx-checksumming: on\ngeneric-receive-offload: on\ntcp-segmentation-offload: off\n" +
		"\ttx-tcp-segmentation: off\nlarge-receive-offload: off [fixed]\nrx-gro-hw: on [fixed]\n")
	tests := []struct {
		name string
		want bool
	}{
		{"generic-receive-offload", true},
		{"tcp-segmentation-offload", false},
		{"large-receive-offload", false},
		{"rx-gro-hw", true},
		{"absent-feature", false},
	}
	for _, tt := range tests {
		if got := featureOn(out, tt.name); got != tt.want {
			t.Errorf("featureOn(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
