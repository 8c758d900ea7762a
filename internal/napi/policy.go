package napi

import (
	"errors"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// nlctrl's numbers (uapi linux/genetlink.h), spelled out here because
// x/sys/unix defines them for Linux only.
const (
	genlIDCtrl       = 0x10
	ctrlCmdGetPolicy = 10
	ctrlAttrFamilyID = 1
	ctrlAttrPolicy   = 8
	ctrlAttrOpPolicy = 9
	ctrlAttrOp       = 10
	ctrlAttrPolicyDo = 1

	nlPolicyTypeAttrMaxValueU = 5 // uapi linux/netlink.h, enum netlink_policy_type_attr
)

// SupportsIRQSuspendTimeout asks the kernel's own napi-set policy (nlctrl
// getpolicy, no privileges needed) whether it accepts irq-suspend-timeout.
// A kernel without napi-set answers false.
func (c *Client) SupportsIRQSuspendTimeout() (bool, error) {
	attrs, err := c.SetPolicyAttrs()
	if errors.Is(err, ErrUnsupported) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return attrs[attrNAPIIRQSuspendTimeout], nil
}

// SetPolicyAttrs returns the attribute types the kernel's napi-set accepts.
// It fails with ErrUnsupported when the kernel has no napi-set.
func (c *Client) SetPolicyAttrs() (map[uint16]bool, error) {
	pol, err := c.setPolicy()
	if err != nil {
		return nil, err
	}
	out := make(map[uint16]bool, len(pol))
	for typ := range pol {
		out[typ] = true
	}
	return out, nil
}

// setPolicy reads napi-set's do-policy from nlctrl.
func (c *Client) setPolicy() (setPolicyAttrs, error) {
	op := "napi: nlctrl getpolicy netdev napi-set"
	ae := netlink.NewAttributeEncoder()
	ae.Uint16(ctrlAttrFamilyID, c.family.ID)
	ae.Uint32(ctrlAttrOp, cmdNAPISet)
	data, err := ae.Encode()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.conn.Execute(genetlink.Message{
		Header: genetlink.Header{Command: ctrlCmdGetPolicy, Version: 1},
		Data:   data,
	}, genlIDCtrl, netlink.Request|netlink.Dump)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) {
			// nlctrl answers ENOENT for an op the family does not have.
			return nil, &opError{op: op, kind: ErrUnsupported, errno: err,
				hint: "the kernel has no napi-set (needs 6.13+)"}
		}
		return nil, classify(op, err, nil, nil)
	}
	attrs, err := decodeOpPolicy(msgs, cmdNAPISet)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return attrs, nil
}

// decodeOpPolicy reads a getpolicy dump: CTRL_ATTR_OP_POLICY messages map an
// op to the index of its "do" policy, CTRL_ATTR_POLICY messages list each
// policy's attribute types with their limits. It returns op's do policy.
func decodeOpPolicy(msgs []genetlink.Message, op uint32) (setPolicyAttrs, error) {
	doPolicy := -1
	policies := map[uint16]setPolicyAttrs{}
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, err
		}
		for ad.Next() {
			switch ad.Type() {
			case ctrlAttrOpPolicy:
				ad.Nested(func(ops *netlink.AttributeDecoder) error {
					for ops.Next() {
						if uint32(ops.Type()) != op {
							continue
						}
						ops.Nested(func(p *netlink.AttributeDecoder) error {
							for p.Next() {
								if p.Type() != ctrlAttrPolicyDo {
									continue
								}
								idx := int(p.Uint32())
								if doPolicy >= 0 && idx != doPolicy {
									return fmt.Errorf("op %d has do-policies %d and %d", op, doPolicy, idx)
								}
								doPolicy = idx
							}
							return p.Err()
						})
					}
					return ops.Err()
				})
			case ctrlAttrPolicy:
				ad.Nested(func(pols *netlink.AttributeDecoder) error {
					for pols.Next() {
						idx := pols.Type()
						if policies[idx] == nil {
							policies[idx] = setPolicyAttrs{}
						}
						pols.Nested(func(attrs *netlink.AttributeDecoder) error {
							for attrs.Next() {
								typ := attrs.Type()
								a := policies[idx][typ]
								attrs.Nested(func(lim *netlink.AttributeDecoder) error {
									for lim.Next() {
										if lim.Type() != nlPolicyTypeAttrMaxValueU {
											continue
										}
										// Keep the larger of repeated limits, so
										// message order never matters.
										if v, err := decodeUint(lim.Bytes()); err == nil && (!a.hasMaxU || v > a.maxU) {
											a.maxU, a.hasMaxU = v, true
										}
									}
									return nil
								})
								policies[idx][typ] = a
							}
							return attrs.Err()
						})
					}
					return pols.Err()
				})
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
	}
	if doPolicy < 0 {
		return nil, fmt.Errorf("no do-policy reported for op %d", op)
	}
	return policies[uint16(doPolicy)], nil
}
