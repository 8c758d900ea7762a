// Package napi controls the kernel's NAPI instances through the netdev
// generic netlink family: it lists NAPIs and queues, reads and writes the
// per-NAPI knobs IRQ suspension depends on (defer-hard-irqs,
// gro-flush-timeout, irq-suspend-timeout), knows gocached's poll-mode presets,
// and saves/restores the knobs it changes.
//
// The package stands alone: it imports nothing from the server.
package napi

import (
	"errors"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Client talks to the netdev family of one network namespace. It is safe for
// concurrent use.
type Client struct {
	conn   *genetlink.Conn
	family genetlink.Family
}

// Dial opens a Client in the network namespace of the calling thread.
//
// Generic netlink is per network namespace and a socket belongs to the
// namespace it was created in. To talk to another namespace, either use
// DialNetNS, or lock the goroutine to its OS thread (runtime.LockOSThread),
// setns(2) into the namespace, then call Dial from that thread: the socket
// stays in that namespace afterwards, whichever thread later uses it.
func Dial() (*Client, error) {
	return dial(0)
}

// DialNetNS opens a Client in the network namespace referred to by the open
// file descriptor fd (e.g. of /var/run/netns/NAME). Entering a namespace needs
// CAP_SYS_ADMIN.
func DialNetNS(fd int) (*Client, error) {
	if fd <= 0 {
		return nil, fmt.Errorf("napi: bad netns fd %d", fd)
	}
	return dial(fd)
}

func dial(netns int) (*Client, error) {
	// Strict turns on extended acks, so kernel validation errors come with
	// the kernel's own sentence; fall back for kernels that refuse it.
	conn, err := genetlink.Dial(&netlink.Config{NetNS: netns, Strict: true})
	if err != nil {
		conn, err = genetlink.Dial(&netlink.Config{NetNS: netns})
	}
	if err != nil {
		return nil, fmt.Errorf("napi: open generic netlink socket: %w", err)
	}
	c, err := newClient(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// newClient resolves the netdev family on conn (tests pass a genltest conn).
func newClient(conn *genetlink.Conn) (*Client, error) {
	f, err := conn.GetFamily(familyName)
	if err != nil {
		if netlink.IsNotExist(err) {
			return nil, &opError{op: "napi: resolve netdev family", kind: ErrFamilyAbsent, errno: err}
		}
		return nil, fmt.Errorf("napi: resolve netdev family: %w", err)
	}
	return &Client{conn: conn, family: f}, nil
}

// Close releases the netlink socket.
func (c *Client) Close() error { return c.conn.Close() }

// FamilyVersion is the netdev family's version as the kernel reports it.
func (c *Client) FamilyVersion() uint8 { return c.family.Version }

func (c *Client) execute(cmd uint8, data []byte, flags netlink.HeaderFlags) ([]genetlink.Message, error) {
	msg := genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: c.family.Version},
		Data:   data,
	}
	return c.conn.Execute(msg, c.family.ID, flags)
}

func ifindexFilter(attr uint16, ifindex int) ([]byte, error) {
	if ifindex < 0 {
		return nil, fmt.Errorf("bad ifindex %d", ifindex)
	}
	if ifindex == 0 {
		return nil, nil
	}
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attr, uint32(ifindex))
	return ae.Encode()
}

// NAPIs lists the NAPI instances of interface ifindex, or of every interface
// in the namespace when ifindex is 0 (napi-get dump).
func (c *Client) NAPIs(ifindex int) ([]NAPI, error) {
	op := fmt.Sprintf("napi: napi-get dump ifindex %d", ifindex)
	data, err := ifindexFilter(attrNAPIIfindex, ifindex)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.execute(cmdNAPIGet, data, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, classify(op, err, data, napiAttrNames)
	}
	out := make([]NAPI, 0, len(msgs))
	for _, m := range msgs {
		n, err := decodeNAPI(m.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// NAPI reads one NAPI instance by id (napi-get do).
func (c *Client) NAPI(id uint32) (NAPI, error) {
	op := fmt.Sprintf("napi: napi-get id %d", id)
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrNAPIID, id)
	data, err := ae.Encode()
	if err != nil {
		return NAPI{}, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.execute(cmdNAPIGet, data, netlink.Request)
	if err != nil {
		return NAPI{}, classify(op, err, data, napiAttrNames)
	}
	if len(msgs) != 1 {
		return NAPI{}, fmt.Errorf("%s: %d replies, want 1", op, len(msgs))
	}
	n, err := decodeNAPI(msgs[0].Data)
	if err != nil {
		return NAPI{}, fmt.Errorf("%s: %w", op, err)
	}
	return n, nil
}

// Queues lists the queues of interface ifindex, or of every interface when
// ifindex is 0 (queue-get dump).
func (c *Client) Queues(ifindex int) ([]Queue, error) {
	op := fmt.Sprintf("napi: queue-get dump ifindex %d", ifindex)
	data, err := ifindexFilter(attrQueueIfindex, ifindex)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	msgs, err := c.execute(cmdQueueGet, data, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, classify(op, err, data, queueAttrNames)
	}
	out := make([]Queue, 0, len(msgs))
	for _, m := range msgs {
		q, err := decodeQueue(m.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, q)
	}
	return out, nil
}

// Set writes the knobs k sets on NAPI id (napi-set); nil fields are left
// alone. It needs CAP_NET_ADMIN.
func (c *Client) Set(id uint32, k Knobs) error {
	op := fmt.Sprintf("napi: napi-set id %d", id)
	if k.Empty() {
		return fmt.Errorf("%s: no knob to set", op)
	}
	data, err := encodeSet(id, k)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = c.execute(cmdNAPISet, data, netlink.Request|netlink.Acknowledge)
	if err != nil && k.BusyPollsThreaded() && c.refusedThreadedBusyPoll(err, data) {
		return errNoThreadedBusyPoll(op, err)
	}
	if err != nil && errors.Is(err, unix.EINVAL) && k.IRQSuspendTimeout != nil {
		// Tell "the kernel predates irq-suspend-timeout" apart from a
		// plain bad value by asking the kernel's own policy.
		ok, perr := c.SupportsIRQSuspendTimeout()
		if (perr == nil && !ok) || (perr != nil && isUnknownAttr(err)) {
			return errSuspendUnsupported(op, err)
		}
	}
	return classify(op, err, data, napiAttrNames)
}
