package napi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

var fakeFamily = genetlink.Family{ID: 0x1d, Name: familyName, Version: 1}

// fakeKernel answers netdev requests from a table of NAPIs, the way the
// kernel does: dump filtered by ifindex, do by id, set with EPERM/ENOENT.
type fakeKernel struct {
	napis      []NAPI
	queues     []Queue
	noSuspend  bool // napi-set policy predates irq-suspend-timeout
	deny       bool // caller lacks CAP_NET_ADMIN
	lastSet    map[uint16]uint64
	setCalls   int
	failSetIDs map[uint32]bool
	// threadedMax is the largest threaded value napi-set's policy allows:
	// 0 for a kernel without the attribute (before 6.17), 1 for 6.17 and
	// 6.18, 2 with threaded busy polling (6.19+).
	threadedMax uint64
}

func (k *fakeKernel) dial(t *testing.T) *Client {
	t.Helper()
	conn := genltest.Dial(genltest.ServeFamily(fakeFamily, k.serve))
	c, err := newClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func reqAttrs(b []byte) (map[uint16]uint64, error) {
	out := map[uint16]uint64{}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	for ad.Next() {
		var v uint64
		if b := ad.Bytes(); len(b) == 2 { // CTRL_ATTR_FAMILY_ID is a u16
			v = uint64(binary.NativeEndian.Uint16(b))
		} else {
			ad.Do(uintInto(&v))
		}
		out[ad.Type()] = v
	}
	return out, ad.Err()
}

func encodeNAPI(n NAPI) []byte {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrNAPIID, n.ID)
	ae.Uint32(attrNAPIIfindex, n.Ifindex)
	if n.IRQ >= 0 {
		ae.Uint32(attrNAPIIRQ, uint32(n.IRQ))
	}
	if n.DeferHardIRQs != nil {
		ae.Uint32(attrNAPIDeferHardIRQs, *n.DeferHardIRQs)
	}
	// Like nla_put_uint: 4 bytes when the value fits, 8 otherwise.
	putUint := func(typ uint16, v *uint64) {
		switch {
		case v == nil:
		case *v <= 1<<32-1:
			ae.Uint32(typ, uint32(*v))
		default:
			ae.Uint64(typ, *v)
		}
	}
	putUint(attrNAPIGROFlushTimeout, n.GROFlushTimeout)
	putUint(attrNAPIIRQSuspendTimeout, n.IRQSuspendTimeout)
	if n.Threaded != nil {
		ae.Uint32(attrNAPIThreaded, *n.Threaded)
	}
	b, _ := ae.Encode()
	return b
}

func (k *fakeKernel) serve(greq genetlink.Message, nreq netlink.Message) ([]genetlink.Message, error) {
	attrs, err := reqAttrs(greq.Data)
	if err != nil {
		return nil, err
	}
	if nreq.Header.Type == genlIDCtrl && greq.Header.Command == ctrlCmdGetPolicy {
		return k.policy(attrs)
	}
	if nreq.Header.Type != netlink.HeaderType(fakeFamily.ID) {
		return nil, fmt.Errorf("request to family %d", nreq.Header.Type)
	}
	dump := nreq.Header.Flags&netlink.Dump != 0
	switch greq.Header.Command {
	case cmdNAPIGet:
		var out []genetlink.Message
		for _, n := range k.napis {
			if (dump && (attrs[attrNAPIIfindex] == 0 || uint64(n.Ifindex) == attrs[attrNAPIIfindex])) ||
				(!dump && uint64(n.ID) == attrs[attrNAPIID]) {
				out = append(out, genetlink.Message{Header: greq.Header, Data: encodeNAPI(n)})
			}
		}
		if !dump && len(out) == 0 {
			return nil, genltest.Error(int(unix.ENOENT))
		}
		return orEOF(out)
	case cmdQueueGet:
		var out []genetlink.Message
		for _, q := range k.queues {
			if attrs[attrQueueIfindex] != 0 && uint64(q.Ifindex) != attrs[attrQueueIfindex] {
				continue
			}
			ae := netlink.NewAttributeEncoder()
			ae.Uint32(attrQueueID, q.ID)
			ae.Uint32(attrQueueIfindex, q.Ifindex)
			ae.Uint32(attrQueueType, uint32(q.Type))
			if q.NAPIID != 0 {
				ae.Uint32(attrQueueNAPIID, q.NAPIID)
			}
			b, _ := ae.Encode()
			out = append(out, genetlink.Message{Header: greq.Header, Data: b})
		}
		return orEOF(out)
	case cmdNAPISet:
		k.setCalls++
		if k.deny {
			return nil, genltest.Error(int(unix.EPERM))
		}
		if _, ok := attrs[attrNAPIIRQSuspendTimeout]; ok && k.noSuspend {
			return nil, genltest.Error(int(unix.EINVAL))
		}
		if v, ok := attrs[attrNAPIThreaded]; ok && k.threadedMax == 0 {
			return nil, genltest.Error(int(unix.EINVAL)) // unknown attribute type
		} else if ok && v > k.threadedMax {
			return nil, genltest.Error(int(unix.ERANGE)) // integer out of range
		}
		id := uint32(attrs[attrNAPIID])
		if k.failSetIDs[id] {
			return nil, genltest.Error(int(unix.EIO))
		}
		for i := range k.napis {
			if k.napis[i].ID != id {
				continue
			}
			k.lastSet = attrs
			n := &k.napis[i]
			if v, ok := attrs[attrNAPIDeferHardIRQs]; ok {
				n.DeferHardIRQs = Uint32(uint32(v))
			}
			if v, ok := attrs[attrNAPIGROFlushTimeout]; ok {
				n.GROFlushTimeout = Uint64(v)
			}
			if v, ok := attrs[attrNAPIIRQSuspendTimeout]; ok {
				n.IRQSuspendTimeout = Uint64(v)
			}
			if v, ok := attrs[attrNAPIThreaded]; ok {
				n.Threaded = Uint32(uint32(v))
			}
			return nil, io.EOF
		}
		return nil, genltest.Error(int(unix.ENOENT))
	}
	return nil, genltest.Error(int(unix.EOPNOTSUPP))
}

// orEOF is how a genltest Func says "no messages" (an empty dump).
func orEOF(msgs []genetlink.Message) ([]genetlink.Message, error) {
	if len(msgs) == 0 {
		return nil, io.EOF
	}
	return msgs, nil
}

// policy answers nlctrl getpolicy for napi-set the way the kernel lays it out.
func (k *fakeKernel) policy(attrs map[uint16]uint64) ([]genetlink.Message, error) {
	if attrs[ctrlAttrFamilyID] != uint64(fakeFamily.ID) || attrs[ctrlAttrOp] != cmdNAPISet {
		return nil, genltest.Error(int(unix.ENOENT))
	}
	return fakePolicyDump(k.noSuspend, k.threadedMax)
}

func vethNAPIs() []NAPI {
	var out []NAPI
	for i := range 4 {
		out = append(out, NAPI{ID: uint32(8193 + i), Ifindex: 2, IRQ: -1,
			Knobs: threeKnobs(Uint32(0), Uint64(0), Uint64(0))})
	}
	out = append(out, NAPI{ID: 9000, Ifindex: 7, IRQ: 131, Knobs: threeKnobs(Uint32(2), Uint64(1<<33), Uint64(0))})
	return out
}

func TestClientNAPIs(t *testing.T) {
	k := &fakeKernel{napis: vethNAPIs()}
	c := k.dial(t)
	tests := []struct {
		ifindex int
		wantIDs []uint32
	}{
		{2, []uint32{8193, 8194, 8195, 8196}},
		{7, []uint32{9000}},
		{0, []uint32{8193, 8194, 8195, 8196, 9000}},
		{5, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("ifindex", tt.ifindex), func(t *testing.T) {
			got, err := c.NAPIs(tt.ifindex)
			if err != nil {
				t.Fatal(err)
			}
			var ids []uint32
			for _, n := range got {
				ids = append(ids, n.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.wantIDs) {
				t.Fatalf("ids %v, want %v", ids, tt.wantIDs)
			}
		})
	}
	n, err := c.NAPI(9000)
	if err != nil {
		t.Fatal(err)
	}
	if n.IRQ != 131 || *n.GROFlushTimeout != 1<<33 || *n.DeferHardIRQs != 2 {
		t.Fatalf("NAPI(9000) = %s", n)
	}
	if _, err := c.NAPIs(-1); err == nil {
		t.Fatal("NAPIs(-1) succeeded")
	}
}

func TestClientQueues(t *testing.T) {
	k := &fakeKernel{queues: []Queue{
		{ID: 0, Ifindex: 2, Type: QueueRX}, {ID: 1, Ifindex: 2, Type: QueueRX},
		{ID: 0, Ifindex: 2, Type: QueueTX}, {ID: 0, Ifindex: 7, Type: QueueRX, NAPIID: 9000},
	}}
	c := k.dial(t)
	qs, err := c.Queues(7)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0] != k.queues[3] {
		t.Fatalf("Queues(7) = %+v", qs)
	}
	qs, err = c.Queues(2)
	if err != nil || len(qs) != 3 {
		t.Fatalf("Queues(2) = %+v, %v", qs, err)
	}
}

func TestClientSet(t *testing.T) {
	k := &fakeKernel{napis: vethNAPIs()}
	c := k.dial(t)
	if err := c.Set(8194, threeKnobs(Uint32(100), Uint64(20000), Uint64(20_000_000))); err != nil {
		t.Fatal(err)
	}
	n, err := c.NAPI(8194)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n.Knobs.String(), "defer=100 gro=20000ns suspend=20000000ns"; got != want {
		t.Fatalf("after set: %s, want %s", got, want)
	}
	// Only the fields given are sent.
	if err := c.Set(8194, Knobs{GROFlushTimeout: Uint64(5)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.lastSet[attrNAPIDeferHardIRQs]; ok || k.lastSet[attrNAPIGROFlushTimeout] != 5 {
		t.Fatalf("partial set sent %v", k.lastSet)
	}
	if err := c.Set(8194, Knobs{}); err == nil {
		t.Fatal("empty set succeeded")
	}
}

func TestClientErrors(t *testing.T) {
	full := threeKnobs(Uint32(100), Uint64(20000), Uint64(20_000_000))
	tests := []struct {
		name     string
		kernel   fakeKernel
		do       func(c *Client) error
		sentinel error
		errno    error
		mention  string
	}{
		{"no CAP_NET_ADMIN", fakeKernel{napis: vethNAPIs(), deny: true},
			func(c *Client) error { return c.Set(8193, full) }, ErrPermission, unix.EPERM, "CAP_NET_ADMIN"},
		{"unknown id on set", fakeKernel{napis: vethNAPIs()},
			func(c *Client) error { return c.Set(1, full) }, ErrNoSuchNAPI, unix.ENOENT, "unknown NAPI id"},
		{"unknown id on get", fakeKernel{napis: vethNAPIs()},
			func(c *Client) error { _, err := c.NAPI(1); return err }, ErrNoSuchNAPI, unix.ENOENT, "napi show"},
		{"kernel without irq-suspend-timeout", fakeKernel{napis: vethNAPIs(), noSuspend: true},
			func(c *Client) error { return c.Set(8193, full) }, ErrUnsupported, unix.EINVAL, "6.13"},
		{"bad value is not called unsupported", fakeKernel{napis: vethNAPIs(), failSetIDs: map[uint32]bool{8193: true}},
			func(c *Client) error { return c.Set(8193, full) }, nil, unix.EIO, "input/output error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.kernel
			err := tt.do(k.dial(t))
			if err == nil {
				t.Fatal("no error")
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("%v is not %v", err, tt.sentinel)
			}
			if !errors.Is(err, tt.errno) {
				t.Errorf("%v does not wrap %v", err, tt.errno)
			}
			if !strings.Contains(err.Error(), tt.mention) || strings.Contains(err.Error(), "\n") {
				t.Errorf("message %q: want one line mentioning %q", err, tt.mention)
			}
		})
	}
}

func TestFamilyAbsent(t *testing.T) {
	conn := genltest.Dial(func(greq genetlink.Message, nreq netlink.Message) ([]genetlink.Message, error) {
		return nil, genltest.Error(int(unix.ENOENT))
	})
	defer conn.Close()
	_, err := newClient(conn)
	if !errors.Is(err, ErrFamilyAbsent) || !strings.Contains(err.Error(), "kernel too old") {
		t.Fatalf("err = %v, want ErrFamilyAbsent", err)
	}
}

func TestBlamedAttr(t *testing.T) {
	req, err := encodeSet(5, threeKnobs(Uint32(1<<31), Uint64(1), Uint64(2)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		offset int
		want   string
	}{
		{requestHeaderLen, "id"},
		{requestHeaderLen + 8, "defer-hard-irqs"},
		{requestHeaderLen + 16, "gro-flush-timeout"},
		{requestHeaderLen + 28, "irq-suspend-timeout"},
		{requestHeaderLen + 4, ""}, // inside an attribute, not at one
		{0, ""},
		{requestHeaderLen + 400, ""},
	}
	for _, tt := range tests {
		oe := &netlink.OpError{Op: "receive", Err: unix.ERANGE, Offset: tt.offset, Message: "integer out of range"}
		if got := blamedAttr(oe, req, napiAttrNames); got != tt.want {
			t.Errorf("offset %d: %q, want %q", tt.offset, got, tt.want)
		}
	}
	msg := classify("napi: napi-set id 5", &netlink.OpError{Op: "receive", Err: unix.ERANGE,
		Offset: requestHeaderLen + 8, Message: "integer out of range"}, req, napiAttrNames).Error()
	if want := "napi: napi-set id 5: numerical result out of range in attribute defer-hard-irqs (kernel: integer out of range)"; msg != want {
		t.Errorf("message\n %q\nwant %q", msg, want)
	}
}

// What a `stats reactors` call pays per read of the kernel's NAPI table
// (host namespace; every NAPI of every interface).
func BenchmarkClientNAPIsDump(b *testing.B) {
	c, err := Dial()
	if err != nil {
		b.Skipf("no netdev family here: %v", err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.NAPIs(0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClientNAPIDo(b *testing.B) {
	c, err := Dial()
	if err != nil {
		b.Skipf("no netdev family here: %v", err)
	}
	defer c.Close()
	napis, err := c.NAPIs(0)
	if err != nil || len(napis) == 0 {
		b.Skipf("no NAPI in this namespace to read (%v)", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.NAPI(napis[0].ID); err != nil {
			b.Fatal(err)
		}
	}
}
