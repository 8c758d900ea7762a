package napi

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
)

// The netdev family's numbers, from the kernel's
// Documentation/netlink/specs/netdev.yaml (uapi linux/netdev.h).
const (
	familyName = "netdev"

	cmdQueueGet = 10
	cmdNAPIGet  = 11
	cmdNAPISet  = 14

	attrNAPIIfindex           = 1
	attrNAPIID                = 2
	attrNAPIIRQ               = 3
	attrNAPIPID               = 4
	attrNAPIDeferHardIRQs     = 5
	attrNAPIGROFlushTimeout   = 6
	attrNAPIIRQSuspendTimeout = 7
	attrNAPIThreaded          = 8

	attrQueueID      = 1
	attrQueueIfindex = 2
	attrQueueType    = 3
	attrQueueNAPIID  = 4
)

// AttrIRQSuspendTimeout is napi-set's irq-suspend-timeout attribute type, as
// found in the map SetPolicyAttrs returns.
const AttrIRQSuspendTimeout = attrNAPIIRQSuspendTimeout

// napi-set's threaded values (enum napi-threaded in the netdev spec).
const (
	ThreadedDisabled = 0
	ThreadedEnabled  = 1 // polled by a per-NAPI kthread (6.17+)
	ThreadedBusyPoll = 2 // the kthread busy-polls without pause (6.19+)
)

// ThreadedName spells a threaded value as the netdev spec does.
func ThreadedName(v uint32) string {
	switch v {
	case ThreadedDisabled:
		return "disabled"
	case ThreadedEnabled:
		return "enabled"
	case ThreadedBusyPoll:
		return "busy-poll"
	}
	return fmt.Sprint(v)
}

// Knobs are the per-NAPI settings napi-set writes. A nil field is left alone
// on Set and means "not reported by this kernel" when read back.
type Knobs struct {
	DeferHardIRQs     *uint32 `json:"defer_hard_irqs,omitempty"`
	GROFlushTimeout   *uint64 `json:"gro_flush_timeout_ns,omitempty"`   // nanoseconds
	IRQSuspendTimeout *uint64 `json:"irq_suspend_timeout_ns,omitempty"` // nanoseconds
	// Threaded is 0 disabled, 1 enabled (6.17+), 2 busy-poll (6.19+).
	Threaded *uint32 `json:"threaded,omitempty"`
}

// Empty reports whether k sets nothing.
func (k Knobs) Empty() bool {
	return k.DeferHardIRQs == nil && k.GROFlushTimeout == nil && k.IRQSuspendTimeout == nil && k.Threaded == nil
}

// BusyPollsThreaded reports whether k turns on threaded busy polling.
func (k Knobs) BusyPollsThreaded() bool { return k.Threaded != nil && *k.Threaded == ThreadedBusyPoll }

// Override returns k with every field o sets replaced by o's value.
func (k Knobs) Override(o Knobs) Knobs {
	if o.DeferHardIRQs != nil {
		k.DeferHardIRQs = o.DeferHardIRQs
	}
	if o.GROFlushTimeout != nil {
		k.GROFlushTimeout = o.GROFlushTimeout
	}
	if o.IRQSuspendTimeout != nil {
		k.IRQSuspendTimeout = o.IRQSuspendTimeout
	}
	if o.Threaded != nil {
		k.Threaded = o.Threaded
	}
	return k
}

// String formats k as "defer=N gro=Nns suspend=Nns", "-" for unset fields,
// followed by " threaded=NAME" when k carries a threaded value (left out
// otherwise, so the three IRQ knobs read as they always have).
func (k Knobs) String() string {
	s := fmt.Sprintf("defer=%s gro=%sns suspend=%sns",
		optString(k.DeferHardIRQs), optString(k.GROFlushTimeout), optString(k.IRQSuspendTimeout))
	if k.Threaded != nil {
		s += " threaded=" + ThreadedName(*k.Threaded)
	}
	return s
}

func optString[T uint32 | uint64](p *T) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// Uint32 and Uint64 return pointers to v, for building Knobs literals.
func Uint32(v uint32) *uint32 { return &v }
func Uint64(v uint64) *uint64 { return &v }

// NAPI is one NAPI instance as napi-get reports it.
type NAPI struct {
	ID      uint32 `json:"id"`
	Ifindex uint32 `json:"ifindex"`
	// IRQ is the interrupt line, or -1 when the NAPI has none (veth and other
	// software devices) or the kernel does not report it.
	IRQ int `json:"irq"`
	// PID is the kthread polling the NAPI in threaded mode, 0 otherwise.
	PID uint32 `json:"pid,omitempty"`
	Knobs
}

// QueueType says which direction a queue carries.
type QueueType uint32

const (
	QueueRX QueueType = 0
	QueueTX QueueType = 1
)

func (t QueueType) String() string {
	switch t {
	case QueueRX:
		return "rx"
	case QueueTX:
		return "tx"
	}
	return fmt.Sprintf("type%d", uint32(t))
}

// MarshalText makes queue types read as "rx"/"tx" in JSON.
func (t QueueType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Queue is one device queue as queue-get reports it.
type Queue struct {
	ID      uint32    `json:"id"`
	Ifindex uint32    `json:"ifindex"`
	Type    QueueType `json:"type"`
	// NAPIID is the NAPI serving the queue, 0 when the driver does not report
	// it (veth does not).
	NAPIID uint32 `json:"napi_id,omitempty"`
}

// decodeUint reads a kernel "uint" attribute, which the kernel emits as 4
// bytes when the value fits and 8 otherwise (nla_put_uint). Fixed u32
// attributes arrive as 4 bytes and decode the same way.
func decodeUint(b []byte) (uint64, error) {
	switch len(b) {
	case 4:
		return uint64(binary.NativeEndian.Uint32(b)), nil
	case 8:
		return binary.NativeEndian.Uint64(b), nil
	}
	return 0, fmt.Errorf("uint attribute of %d bytes, want 4 or 8", len(b))
}

// decodeUint32 is decodeUint for attributes whose values must fit 32 bits.
func decodeUint32(b []byte) (uint32, error) {
	v, err := decodeUint(b)
	if err != nil {
		return 0, err
	}
	if v > 1<<32-1 {
		return 0, fmt.Errorf("value %d does not fit 32 bits", v)
	}
	return uint32(v), nil
}

// uintInto returns an AttributeDecoder.Do callback storing into dst.
func uintInto(dst *uint64) func([]byte) error {
	return func(b []byte) (err error) { *dst, err = decodeUint(b); return err }
}

func uint32Into(dst *uint32) func([]byte) error {
	return func(b []byte) (err error) { *dst, err = decodeUint32(b); return err }
}

// decodeNAPI parses the attributes of one napi-get reply.
func decodeNAPI(b []byte) (NAPI, error) {
	n := NAPI{IRQ: -1}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return n, fmt.Errorf("napi-get reply: %w", err)
	}
	var seenID bool
	for ad.Next() {
		switch ad.Type() {
		case attrNAPIID:
			seenID = true
			ad.Do(uint32Into(&n.ID))
		case attrNAPIIfindex:
			ad.Do(uint32Into(&n.Ifindex))
		case attrNAPIIRQ:
			var irq uint32
			ad.Do(uint32Into(&irq))
			n.IRQ = int(int32(irq))
		case attrNAPIPID:
			ad.Do(uint32Into(&n.PID))
		case attrNAPIThreaded:
			n.Threaded = new(uint32)
			ad.Do(uint32Into(n.Threaded))
		case attrNAPIDeferHardIRQs:
			n.DeferHardIRQs = new(uint32)
			ad.Do(uint32Into(n.DeferHardIRQs))
		case attrNAPIGROFlushTimeout:
			n.GROFlushTimeout = new(uint64)
			ad.Do(uintInto(n.GROFlushTimeout))
		case attrNAPIIRQSuspendTimeout:
			n.IRQSuspendTimeout = new(uint64)
			ad.Do(uintInto(n.IRQSuspendTimeout))
		}
	}
	if err := ad.Err(); err != nil {
		return n, fmt.Errorf("napi-get reply: attribute %d: %w", ad.Type(), err)
	}
	if !seenID {
		return n, fmt.Errorf("napi-get reply without a NAPI id")
	}
	return n, nil
}

// decodeQueue parses the attributes of one queue-get reply.
func decodeQueue(b []byte) (Queue, error) {
	var q Queue
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return q, fmt.Errorf("queue-get reply: %w", err)
	}
	var seenType bool
	for ad.Next() {
		switch ad.Type() {
		case attrQueueID:
			ad.Do(uint32Into(&q.ID))
		case attrQueueIfindex:
			ad.Do(uint32Into(&q.Ifindex))
		case attrQueueType:
			seenType = true
			var t uint32
			ad.Do(uint32Into(&t))
			q.Type = QueueType(t)
		case attrQueueNAPIID:
			ad.Do(uint32Into(&q.NAPIID))
		}
	}
	if err := ad.Err(); err != nil {
		return q, fmt.Errorf("queue-get reply: attribute %d: %w", ad.Type(), err)
	}
	if !seenType {
		return q, fmt.Errorf("queue-get reply without a queue type")
	}
	return q, nil
}

// encodeSet builds the attributes of a napi-set request. The kernel's policy
// takes defer-hard-irqs and threaded as u32 and the timeouts as "uint"; 8
// bytes are always accepted for a uint.
func encodeSet(id uint32, k Knobs) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrNAPIID, id)
	if k.DeferHardIRQs != nil {
		ae.Uint32(attrNAPIDeferHardIRQs, *k.DeferHardIRQs)
	}
	if k.GROFlushTimeout != nil {
		ae.Uint64(attrNAPIGROFlushTimeout, *k.GROFlushTimeout)
	}
	if k.IRQSuspendTimeout != nil {
		ae.Uint64(attrNAPIIRQSuspendTimeout, *k.IRQSuspendTimeout)
	}
	if k.Threaded != nil {
		ae.Uint32(attrNAPIThreaded, *k.Threaded) // u32 in the kernel's policy
	}
	return ae.Encode()
}

// String overrides the promoted Knobs.String so a NAPI prints whole.
func (n NAPI) String() string {
	return fmt.Sprintf("napi %d ifindex %d irq %d pid %d %s", n.ID, n.Ifindex, n.IRQ, n.PID, n.Knobs)
}
