package cli

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// rawKnobs is one NAPI as read by rawNAPIDump.
type rawKnobs struct {
	Ifindex                 uint32
	Defer, GRO, Suspend     uint64
	HasDefer, HasGRO, HasSp bool
	Threaded                uint64
	HasThreaded             bool
}

// rawNAPIDump reads the NAPIs of ifindex with hand-built netlink messages on
// a plain AF_NETLINK socket, sharing no code with package napi or
// mdlayher/netlink: the independent read the CLI's output is checked against.
// The socket lives in the calling thread's network namespace.
func rawNAPIDump(ifindex int) (map[uint32]rawKnobs, error) {
	fd, err := rawSocket()
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	family, err := rawNetdevFamily(fd)
	if err != nil {
		return nil, err
	}
	msgs, err := rawExec(fd, family, unix.NLM_F_REQUEST|unix.NLM_F_DUMP, 11 /* napi-get */, 1,
		rawAttr(1 /* ifindex */, binary.NativeEndian.AppendUint32(nil, uint32(ifindex))))
	if err != nil {
		return nil, fmt.Errorf("napi-get dump: %w", err)
	}
	out := map[uint32]rawKnobs{}
	for _, m := range msgs {
		var id uint32
		var k rawKnobs
		for typ, v := range rawAttrs(m) {
			n := rawUint(v)
			switch typ {
			case 1:
				k.Ifindex = uint32(n)
			case 2:
				id = uint32(n)
			case 5:
				k.Defer, k.HasDefer = n, true
			case 6:
				k.GRO, k.HasGRO = n, true
			case 7:
				k.Suspend, k.HasSp = n, true
			case 8:
				k.Threaded, k.HasThreaded = n, true
			}
		}
		out[id] = k
	}
	return out, nil
}

func rawSocket() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func rawNetdevFamily(fd int) (uint16, error) {
	name := append([]byte("netdev"), 0)
	msgs, err := rawExec(fd, unix.GENL_ID_CTRL, unix.NLM_F_REQUEST, unix.CTRL_CMD_GETFAMILY, 1,
		rawAttr(unix.CTRL_ATTR_FAMILY_NAME, name))
	if err != nil {
		return 0, fmt.Errorf("getfamily: %w", err)
	}
	for _, m := range msgs {
		for typ, v := range rawAttrs(m) {
			if typ == unix.CTRL_ATTR_FAMILY_ID {
				return binary.NativeEndian.Uint16(v), nil
			}
		}
	}
	return 0, fmt.Errorf("no netdev family id")
}

// rawSetThreaded is napi-set id threaded=v, built by hand; it returns the
// kernel's errno (nil when it took the value).
func rawSetThreaded(id uint32, v uint32) error {
	fd, err := rawSocket()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	family, err := rawNetdevFamily(fd)
	if err != nil {
		return err
	}
	attrs := append(rawAttr(2 /* id */, binary.NativeEndian.AppendUint32(nil, id)),
		rawAttr(8 /* threaded */, binary.NativeEndian.AppendUint32(nil, v))...)
	_, err = rawExec(fd, family, unix.NLM_F_REQUEST|unix.NLM_F_ACK, 14 /* napi-set */, 1, attrs)
	return err
}

func rawAttr(typ uint16, data []byte) []byte {
	b := binary.NativeEndian.AppendUint16(nil, uint16(4+len(data)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// rawExec sends one request and collects the genl payloads (after the 4-byte
// genl header) of the replies until the kernel is done.
func rawExec(fd int, typ uint16, flags uint16, cmd, version uint8, attrs []byte) ([][]byte, error) {
	const seq = 7
	req := binary.NativeEndian.AppendUint32(nil, uint32(unix.NLMSG_HDRLEN+4+len(attrs)))
	req = binary.NativeEndian.AppendUint16(req, typ)
	req = binary.NativeEndian.AppendUint16(req, flags)
	req = binary.NativeEndian.AppendUint32(req, seq)
	req = binary.NativeEndian.AppendUint32(req, 0)
	req = append(req, cmd, version, 0, 0)
	req = append(req, attrs...)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var out [][]byte
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if errno := int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
					return nil, unix.Errno(-errno)
				}
				return out, nil
			}
			out = append(out, m.Data[4:])
			if flags&unix.NLM_F_DUMP == 0 {
				return out, nil
			}
		}
	}
}

// rawAttrs walks a flat attribute list.
func rawAttrs(b []byte) map[uint16][]byte {
	out := map[uint16][]byte{}
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		typ := binary.NativeEndian.Uint16(b[2:]) & 0x3fff
		if l < 4 || l > len(b) {
			break
		}
		out[typ] = b[4:l]
		b = b[min((l+3)&^3, len(b)):]
	}
	return out
}

func rawUint(v []byte) uint64 {
	switch len(v) {
	case 4:
		return uint64(binary.NativeEndian.Uint32(v))
	case 8:
		return binary.NativeEndian.Uint64(v)
	}
	return 1<<64 - 1 // an impossible value makes any comparison fail
}
