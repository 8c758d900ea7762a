package napi

import (
	"fmt"
	"testing"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

// fakePolicyDump lays out napi-set's policy as the kernel dumps it; a
// nonzero threadedMax adds threaded with that NL_POLICY_TYPE_ATTR_MAX_VALUE_U.
func fakePolicyDump(noSuspend bool, threadedMax uint64) ([]genetlink.Message, error) {
	ops := netlink.NewAttributeEncoder()
	ops.Uint16(ctrlAttrFamilyID, fakeFamily.ID)
	ops.Nested(ctrlAttrOpPolicy, func(ae *netlink.AttributeEncoder) error {
		ae.Nested(cmdNAPISet, func(ae *netlink.AttributeEncoder) error {
			ae.Uint32(ctrlAttrPolicyDo, 0)
			return nil
		})
		return nil
	})
	opsb, err := ops.Encode()
	if err != nil {
		return nil, err
	}
	types := []uint16{attrNAPIID, attrNAPIDeferHardIRQs, attrNAPIGROFlushTimeout}
	if !noSuspend {
		types = append(types, attrNAPIIRQSuspendTimeout)
	}
	pol := netlink.NewAttributeEncoder()
	pol.Uint16(ctrlAttrFamilyID, fakeFamily.ID)
	pol.Nested(ctrlAttrPolicy, func(ae *netlink.AttributeEncoder) error {
		ae.Nested(0, func(ae *netlink.AttributeEncoder) error {
			for _, typ := range types {
				ae.Nested(typ, func(ae *netlink.AttributeEncoder) error {
					ae.Uint32(1, 4)
					return nil
				})
			}
			if threadedMax > 0 {
				ae.Nested(attrNAPIThreaded, func(ae *netlink.AttributeEncoder) error {
					ae.Uint32(1, 4)                                   // NL_ATTR_TYPE_U32
					ae.Uint64(nlPolicyTypeAttrMaxValueU-1, 0)         // MIN_VALUE_U
					ae.Uint64(nlPolicyTypeAttrMaxValueU, threadedMax) // MAX_VALUE_U
					return nil
				})
			}
			return nil
		})
		return nil
	})
	polb, err := pol.Encode()
	if err != nil {
		return nil, err
	}
	h := genetlink.Header{Command: ctrlCmdGetPolicy, Version: 1}
	return []genetlink.Message{{Header: h, Data: opsb}, {Header: h, Data: polb}}, nil
}

func TestSupportsIRQSuspendTimeout(t *testing.T) {
	for _, noSuspend := range []bool{false, true} {
		k := &fakeKernel{noSuspend: noSuspend}
		got, err := k.dial(t).SupportsIRQSuspendTimeout()
		if err != nil {
			t.Fatal(err)
		}
		if got == noSuspend {
			t.Errorf("noSuspend=%v: SupportsIRQSuspendTimeout = %v", noSuspend, got)
		}
	}
}

func TestDecodeOpPolicyWithoutOp(t *testing.T) {
	msgs, err := fakePolicyDump(false, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeOpPolicy(msgs[1:], cmdNAPISet); err == nil {
		t.Fatal("decoded a policy dump that never named the op's policy")
	}
	if _, err := decodeOpPolicy(msgs, cmdQueueGet); err == nil {
		t.Fatal("found a do-policy for an op the dump does not list")
	}
}

func FuzzDecodeOpPolicy(f *testing.F) {
	msgs, err := fakePolicyDump(false, 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(msgs[0].Data, msgs[1].Data)
	f.Add(msgs[1].Data, msgs[0].Data)
	f.Add([]byte{}, []byte{4, 0, 9, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		// The kernel may send the op map before or after the policies:
		// the answer must not depend on message order.
		ab, errAB := decodeOpPolicy([]genetlink.Message{{Data: a}, {Data: b}}, cmdNAPISet)
		ba, errBA := decodeOpPolicy([]genetlink.Message{{Data: b}, {Data: a}}, cmdNAPISet)
		if (errAB == nil) != (errBA == nil) || fmt.Sprint(ab) != fmt.Sprint(ba) {
			t.Fatalf("order matters: %v/%v vs %v/%v", ab, errAB, ba, errBA)
		}
	})
}

func TestDecodeOpPolicyConflict(t *testing.T) {
	msgs, err := fakePolicyDump(false, 1)
	if err != nil {
		t.Fatal(err)
	}
	other := netlink.NewAttributeEncoder()
	other.Nested(ctrlAttrOpPolicy, func(ae *netlink.AttributeEncoder) error {
		ae.Nested(cmdNAPISet, func(ae *netlink.AttributeEncoder) error {
			ae.Uint32(ctrlAttrPolicyDo, 3)
			return nil
		})
		return nil
	})
	b, err := other.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeOpPolicy(append(msgs, genetlink.Message{Data: b}), cmdNAPISet); err == nil {
		t.Fatal("two different do-policies for one op were accepted")
	}
}
