package napi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Sentinel errors: every error the Client returns for one of these situations
// matches it with errors.Is, and its message says what to do.
var (
	// ErrPermission: napi-set (and threaded changes) need CAP_NET_ADMIN in
	// the network namespace's user namespace.
	ErrPermission = errors.New("needs CAP_NET_ADMIN (run as root)")
	// ErrFamilyAbsent: the kernel has no netdev generic netlink family.
	ErrFamilyAbsent = errors.New("kernel too old: no netdev generic netlink family (needs 6.x: NAPI queries 6.8+, napi-set 6.13+)")
	// ErrUnsupported: the kernel knows the family but not the command or
	// attribute asked for.
	ErrUnsupported = errors.New("not supported by this kernel")
	// ErrNoSuchNAPI: no NAPI instance has the id.
	ErrNoSuchNAPI = errors.New("unknown NAPI id")
	// ErrNoSuchDevice: no interface has the ifindex.
	ErrNoSuchDevice = errors.New("no such interface")
)

// opError is what the Client returns: the operation, the kernel's own words
// (extended ack) when it gave any, and a sentinel that says what to do.
type opError struct {
	op     string // e.g. "napi-set id 8193"
	kind   error  // one of the sentinels above, or nil
	hint   string // replaces kind's text when more specific
	errno  error  // the underlying netlink/syscall error
	extack string
	attr   string // the attribute the kernel's extended ack points at, if known
}

func (e *opError) Error() string {
	msg := e.op + ": "
	switch {
	case e.hint != "":
		msg += e.hint
	case e.kind != nil:
		msg += e.kind.Error()
	default:
		msg += bareErrno(e.errno)
	}
	if e.attr != "" {
		msg += " in attribute " + e.attr
	}
	if e.extack != "" {
		msg += fmt.Sprintf(" (kernel: %s)", e.extack)
	}
	return msg
}

// Is matches the sentinel as well as the errno, so callers can test either
// errors.Is(err, ErrPermission) or errors.Is(err, unix.EPERM).
func (e *opError) Is(target error) bool { return e.kind != nil && target == e.kind }

func (e *opError) Unwrap() error { return e.errno }

// bareErrno is err's errno text without mdlayher's "netlink receive:" and
// extack decoration (opError adds the extack once itself).
func bareErrno(err error) string {
	var oe *netlink.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

// attrNames name request attributes in messages, by request kind.
var (
	napiAttrNames = map[uint16]string{attrNAPIIfindex: "ifindex", attrNAPIID: "id",
		attrNAPIDeferHardIRQs: "defer-hard-irqs", attrNAPIGROFlushTimeout: "gro-flush-timeout",
		attrNAPIIRQSuspendTimeout: "irq-suspend-timeout", attrNAPIThreaded: "threaded"}
	queueAttrNames = map[uint16]string{attrQueueIfindex: "ifindex"}
)

// requestHeaderLen is how far into the request message its attributes
// start: the kernel's extack offset counts from the netlink header.
const requestHeaderLen = 16 + 4

// blamedAttr names the request attribute at the extack offset, if any.
func blamedAttr(err error, req []byte, names map[uint16]string) string {
	var oe *netlink.OpError
	if !errors.As(err, &oe) || oe.Offset < requestHeaderLen {
		return ""
	}
	off := oe.Offset - requestHeaderLen
	ad, aerr := netlink.NewAttributeDecoder(req)
	if aerr != nil {
		return ""
	}
	pos := 0
	for ad.Next() {
		if pos == off {
			if n, ok := names[ad.Type()]; ok {
				return n
			}
			return fmt.Sprint(ad.Type())
		}
		pos += 4 + (len(ad.Bytes())+3)&^3
	}
	return ""
}

// classify turns a netlink error from op into an opError; req and names let
// it say which attribute the kernel rejected.
func classify(op string, err error, req []byte, names map[uint16]string) error {
	if err == nil {
		return nil
	}
	e := &opError{op: op, errno: err, extack: extackMessage(err), attr: blamedAttr(err, req, names)}
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		e.kind = ErrPermission
	case errors.Is(err, unix.ENOENT):
		e.kind = ErrNoSuchNAPI
		e.hint = "unknown NAPI id (list them with `gocached napi show`)"
	case errors.Is(err, unix.ENODEV):
		e.kind = ErrNoSuchDevice
	case errors.Is(err, unix.EOPNOTSUPP):
		e.kind = ErrUnsupported
		e.hint = "command not supported by this kernel (napi-get needs 6.8+, napi-set 6.13+)"
	}
	return e
}

// extackMessage is the kernel's extended-ack text, when it sent one.
func extackMessage(err error) string {
	var oe *netlink.OpError
	if errors.As(err, &oe) {
		return oe.Message
	}
	return ""
}

// KernelWords is what the kernel itself said about a failed request: its
// extended ack and the errno, e.g. "integer out of range: numerical result
// out of range".
func KernelWords(err error) string {
	if err == nil {
		return ""
	}
	if m := extackMessage(err); m != "" {
		return m + ": " + bareErrno(err)
	}
	return bareErrno(err)
}

// isUnknownAttr reports whether an error's extended ack says attribute
// validation rejected a type beyond the op's policy (an older kernel).
func isUnknownAttr(err error) bool {
	return strings.Contains(strings.ToLower(extackMessage(err)), "unknown attribute")
}

// errSuspendUnsupported is Set's answer when the kernel's napi-set policy has
// no irq-suspend-timeout.
func errSuspendUnsupported(op string, err error) error {
	return &opError{op: op, kind: ErrUnsupported, errno: err, extack: extackMessage(err),
		hint: "irq-suspend-timeout not supported by this kernel (needs 6.13+)"}
}
