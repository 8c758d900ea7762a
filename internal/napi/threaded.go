package napi

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ThreadedBusyPollKernel is the first release with threaded busy polling
// (upstream c18d4b190a46, "net: Extend NAPI threaded polling to allow
// kthread based busy polling", merged for 6.19).
const ThreadedBusyPollKernel = "Linux 6.19"

// ErrNoThreadedBusyPoll: the kernel refuses napi-set threaded=busy-poll.
// 6.17 and 6.18 cap threaded at 1 (enabled); older kernels do not know the
// attribute at all.
var ErrNoThreadedBusyPoll = errors.New("threaded busy polling (napi-set threaded=busy-poll) is not supported by this kernel; it needs " + ThreadedBusyPollKernel + "+")

func errNoThreadedBusyPoll(op string, err error) error {
	return &opError{op: op, kind: ErrNoThreadedBusyPoll, errno: err, extack: extackMessage(err)}
}

// refusedThreadedBusyPoll tells, after napi-set failed on a request carrying
// threaded=busy-poll, whether the kernel's refusal was of that value: its
// extended ack points at the attribute, or (a socket without extended acks)
// its napi-set policy does not allow the value.
func (c *Client) refusedThreadedBusyPoll(err error, req []byte) bool {
	if !errors.Is(err, unix.ERANGE) && !errors.Is(err, unix.EINVAL) {
		return false
	}
	if attr := blamedAttr(err, req, napiAttrNames); attr != "" {
		return attr == "threaded"
	}
	ok, perr := c.SupportsThreadedBusyPoll()
	return perr == nil && !ok
}

// SupportsThreadedBusyPoll asks the kernel's own napi-set policy (nlctrl
// getpolicy, no privileges needed) whether threaded may be busy-poll. A
// kernel without napi-set answers false.
func (c *Client) SupportsThreadedBusyPoll() (bool, error) {
	pol, err := c.setPolicy()
	if errors.Is(err, ErrUnsupported) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return pol.allows(attrNAPIThreaded, ThreadedBusyPoll), nil
}

// ProbeThreadedBusyPoll asks the kernel whether napi-set takes
// threaded=busy-poll for NAPI id, and changes nothing whatever the answer.
// The request carries, after threaded, a defer-hard-irqs of two bytes, which
// no kernel accepts for a u32. The kernel validates a request's attributes
// in order before acting on any of them, so it either refuses threaded (no
// threaded busy polling) or gets past it and refuses defer-hard-irqs
// (supported); its extended ack says which. It needs CAP_NET_ADMIN, like any
// napi-set. The error, when the answer is false, is the kernel's refusal.
func (c *Client) ProbeThreadedBusyPoll(id uint32) (bool, error) {
	op := fmt.Sprintf("napi: probe napi-set id %d threaded busy-poll", id)
	data, err := encodeThreadedProbe(id)
	if err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	_, err = c.execute(cmdNAPISet, data, netlink.Request|netlink.Acknowledge)
	return probeVerdict(op, err, data)
}

func encodeThreadedProbe(id uint32) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrNAPIID, id)
	ae.Uint32(attrNAPIThreaded, ThreadedBusyPoll)
	ae.Uint16(attrNAPIDeferHardIRQs, 0) // the malformed attribute: a u32 is 4 bytes
	return ae.Encode()
}

// probeVerdict reads the kernel's answer to encodeThreadedProbe's request.
func probeVerdict(op string, err error, req []byte) (bool, error) {
	if err == nil {
		return false, fmt.Errorf("%s: the kernel accepted a malformed request", op)
	}
	classified := classify(op, err, req, napiAttrNames)
	if errors.Is(err, unix.EOPNOTSUPP) {
		return false, errNoThreadedBusyPoll(op, err) // no napi-set at all
	}
	if !errors.Is(err, unix.ERANGE) && !errors.Is(err, unix.EINVAL) {
		return false, classified
	}
	switch blamedAttr(err, req, napiAttrNames) {
	case "defer-hard-irqs":
		return true, nil
	case "threaded":
		return false, errNoThreadedBusyPoll(op, err)
	}
	return false, fmt.Errorf("%w (no extended ack names the attribute it refused)", classified)
}

// policyAttr is what a policy dump says about one attribute.
type policyAttr struct {
	maxU    uint64 // NL_POLICY_TYPE_ATTR_MAX_VALUE_U
	hasMaxU bool
}

// setPolicyAttrs is napi-set's do-policy by attribute type.
type setPolicyAttrs map[uint16]policyAttr

// allows reports whether the policy takes value v for attribute typ.
func (p setPolicyAttrs) allows(typ uint16, v uint64) bool {
	a, ok := p[typ]
	return ok && (!a.hasMaxU || v <= a.maxU)
}
