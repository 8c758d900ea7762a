//go:build linux

package napi

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocached/gocached/kernel/testbed"
	"golang.org/x/sys/unix"
)

// dialIn opens a Client inside namespace ns; the socket stays there.
func dialIn(t *testing.T, b *testbed.Bed, ns string) *Client {
	t.Helper()
	var c *Client
	if err := b.InNS(ns, func() (err error) { c, err = Dial(); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestBedNAPIsAndQueues(t *testing.T) {
	b := testbed.Up(t)
	c := dialIn(t, b, b.ServerNS)
	napis, err := c.NAPIs(b.ServerIfindex)
	if err != nil {
		t.Fatal(err)
	}
	if len(napis) != testbed.Queues {
		t.Fatalf("%d NAPIs on %s, want %d: %v", len(napis), b.ServerDev, testbed.Queues, napis)
	}
	for _, n := range napis {
		if n.ID == 0 || n.Ifindex != uint32(b.ServerIfindex) || n.IRQ != -1 {
			t.Errorf("veth NAPI %s: want nonzero id, ifindex %d, no irq", n, b.ServerIfindex)
		}
		if n.DeferHardIRQs == nil || n.GROFlushTimeout == nil || n.IRQSuspendTimeout == nil {
			t.Errorf("kernel 6.13+ should report all knobs: %s", n)
		}
		one, err := c.NAPI(n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if one.String() != n.String() {
			t.Errorf("do %s != dump %s", one, n)
		}
	}
	queues, err := c.Queues(b.ServerIfindex)
	if err != nil {
		t.Fatal(err)
	}
	var rx, tx int
	for _, q := range queues {
		switch q.Type {
		case QueueRX:
			rx++
		case QueueTX:
			tx++
		}
	}
	if rx != testbed.Queues || tx != testbed.Queues {
		t.Fatalf("queues rx %d tx %d, want %d each: %+v", rx, tx, testbed.Queues, queues)
	}
	if ok, err := c.SupportsIRQSuspendTimeout(); err != nil || !ok {
		t.Fatalf("SupportsIRQSuspendTimeout = %v, %v on a 6.13+ kernel", ok, err)
	}
	if _, err := c.NAPIs(b.ServerIfindex + 1000); !errors.Is(err, ErrNoSuchDevice) {
		t.Fatalf("dump of a missing ifindex: %v, want ErrNoSuchDevice", err)
	}
}

func TestBedSetReadBack(t *testing.T) {
	b := testbed.Up(t)
	c := dialIn(t, b, b.ServerNS)
	napis, err := c.NAPIs(b.ServerIfindex)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range napis {
			if err := c.Set(n.ID, n.Knobs); err != nil {
				t.Errorf("restore %d: %v", n.ID, err)
			}
		}
	})
	tests := []Knobs{
		threeKnobs(Uint32(100), Uint64(20_000), Uint64(20_000_000)),
		threeKnobs(Uint32(2), Uint64(5_000_000), Uint64(0)),
		threeKnobs(Uint32(0), Uint64(0), Uint64(0)),
		{GROFlushTimeout: Uint64(6_000_000_000)}, // > 32 bits: an 8-byte uint on the wire both ways
	}
	for _, k := range tests {
		t.Run(k.String(), func(t *testing.T) {
			for i, n := range napis {
				// Give each NAPI its own defer count so a cross-wired set shows.
				set := k
				if k.DeferHardIRQs != nil && *k.DeferHardIRQs != 0 {
					set.DeferHardIRQs = Uint32(*k.DeferHardIRQs + uint32(i))
				}
				if err := c.Set(n.ID, set); err != nil {
					t.Fatal(err)
				}
				got, err := c.NAPI(n.ID)
				if err != nil {
					t.Fatal(err)
				}
				if want := got.Knobs.Override(set); got.Knobs.String() != want.String() {
					t.Errorf("napi %d: read back %s after setting %s", n.ID, got.Knobs, set)
				}
			}
		})
	}
	if err := c.Set(1<<31, Knobs{DeferHardIRQs: Uint32(1)}); !errors.Is(err, ErrNoSuchNAPI) {
		t.Fatalf("set of a missing id: %v", err)
	}
	// The kernel caps defer-hard-irqs at S32_MAX; its extended ack points at
	// the attribute, which the message names.
	err = c.Set(napis[0].ID, Knobs{DeferHardIRQs: Uint32(1 << 31), IRQSuspendTimeout: Uint64(0)})
	if !errors.Is(err, unix.ERANGE) || errors.Is(err, ErrUnsupported) ||
		!strings.Contains(err.Error(), "in attribute defer-hard-irqs") {
		t.Fatalf("out-of-range defer: %v", err)
	}
}

func TestBedApplyRestore(t *testing.T) {
	b := testbed.Up(t)
	c := dialIn(t, b, b.ServerNS)
	path := filepath.Join(t.TempDir(), "napi-"+b.ServerDev+".json")
	// Distinct starting values per NAPI, so that a restore is told apart
	// from the zeros of base and from a neighbour's values.
	napis, err := c.NAPIs(b.ServerIfindex)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range napis {
		if err := c.Set(n.ID, threeKnobs(Uint32(uint32(3+i)), Uint64(uint64(7000+i)), Uint64(uint64(1_000_000*i)))); err != nil {
			t.Fatal(err)
		}
	}
	before := knobsOf(t, c, b.ServerIfindex)
	for _, name := range []string{"suspend20", "napibusy", "fullbusy", "defer50", "suspend0", "base"} {
		t.Run(name, func(t *testing.T) {
			m := mustMode(t, name)
			if _, err := Apply(c, b.ServerDev, b.ServerIfindex, m.Knobs(), path); err != nil {
				t.Fatal(err)
			}
			napis, err := c.NAPIs(b.ServerIfindex)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range napis {
				// The kernel also reports threaded, which these presets leave alone.
				if got := onlyFieldsOf(n.Knobs, m.Knobs()); got.String() != m.Knobs().String() {
					t.Errorf("napi %d: %s, want %s", n.ID, got, m.Knobs())
				}
			}
			if _, err := Restore(c, path); err != nil {
				t.Fatal(err)
			}
			after := knobsOf(t, c, b.ServerIfindex)
			for id, s := range before {
				if after[id] != s {
					t.Errorf("napi %d: %s after restore, want %s", id, after[id], s)
				}
			}
		})
	}
}

func TestBedDialNetNSAndInterfaceByAddr(t *testing.T) {
	b := testbed.Up(t)
	fd, err := unix.Open("/var/run/netns/"+b.ServerNS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	c, err := DialNetNS(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	napis, err := c.NAPIs(b.ServerIfindex)
	if err != nil || len(napis) != testbed.Queues {
		t.Fatalf("DialNetNS: %d NAPIs, %v", len(napis), err)
	}
	// The host namespace has no such ifindex with 4 veth NAPIs: the
	// client really talks to the bed's namespace.
	if err := b.InNS(b.ServerNS, func() error {
		ifi, err := InterfaceByAddr(b.ServerIP)
		if err != nil {
			return err
		}
		if ifi.Name != b.ServerDev || ifi.Index != b.ServerIfindex {
			t.Errorf("InterfaceByAddr(%s) = %s/%d, want %s/%d", b.ServerIP, ifi.Name, ifi.Index, b.ServerDev, b.ServerIfindex)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
