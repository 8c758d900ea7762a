package protocol

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// binReq builds one binary request.
func binReq(op uint8, key, ext, value string, opaque uint32, cas uint64) string {
	var h [binaryHeaderLen]byte
	h[0] = binaryMagicRequest
	h[1] = op
	binary.BigEndian.PutUint16(h[2:4], uint16(len(key)))
	h[4] = uint8(len(ext))
	binary.BigEndian.PutUint32(h[8:12], uint32(len(ext)+len(key)+len(value)))
	binary.BigEndian.PutUint32(h[12:16], opaque)
	binary.BigEndian.PutUint64(h[16:24], cas)
	return string(h[:]) + ext + key + value
}

// rawHeader builds a request header with every length given explicitly,
// for framing errors.
func rawHeader(op uint8, keyLen uint16, extLen uint8, bodyLen uint32, opaque uint32) string {
	var h [binaryHeaderLen]byte
	h[0] = binaryMagicRequest
	h[1] = op
	binary.BigEndian.PutUint16(h[2:4], keyLen)
	h[4] = extLen
	binary.BigEndian.PutUint32(h[8:12], bodyLen)
	binary.BigEndian.PutUint32(h[12:16], opaque)
	return string(h[:])
}

func be32(v uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return string(b[:])
}

func be64(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return string(b[:])
}

// setExt is the 8-byte extras of set/add/replace.
func setExt(flags, exp uint32) string { return be32(flags) + be32(exp) }

// arithExt is the 20-byte extras of incr/decr.
func arithExt(delta, initial uint64, exp uint32) string {
	return be64(delta) + be64(initial) + be32(exp)
}

// describePackets renders a binary response stream one packet per line,
// with CAS uniques reduced to whether they are set (they differ between
// servers) and STAT values dropped for stats that change between runs.
func describePackets(out string, closed bool) string {
	var b strings.Builder
	for len(out) > 0 {
		if len(out) < binaryHeaderLen {
			fmt.Fprintf(&b, "partial %q\n", out)
			break
		}
		h := out[:binaryHeaderLen]
		keyLen := int(binary.BigEndian.Uint16([]byte(h[2:4])))
		extLen := int(h[4])
		status := binary.BigEndian.Uint16([]byte(h[6:8]))
		bodyLen := int(binary.BigEndian.Uint32([]byte(h[8:12])))
		cas := "0"
		if binary.BigEndian.Uint64([]byte(h[16:24])) != 0 {
			cas = "C"
		}
		if len(out) < binaryHeaderLen+bodyLen || extLen+keyLen > bodyLen {
			fmt.Fprintf(&b, "truncated %q\n", out)
			break
		}
		body := out[binaryHeaderLen : binaryHeaderLen+bodyLen]
		ext, key, val := body[:extLen], body[extLen:extLen+keyLen], body[extLen+keyLen:]
		if h[1] == opStat && keyLen > 0 {
			switch key {
			case "pid", "uptime", "time", "rusage_user", "rusage_system", "libevent", "version",
				"curr_connections", "total_connections", "connection_structures", "bytes_read",
				"bytes_written", "threads", "hash_bytes", "hash_power_level", "total_malloced":
				val = "x"
			}
		}
		fmt.Fprintf(&b, "%02x %02x op=%02x st=%02x ext=%x key=%q val=%q opq=%x cas=%s\n",
			h[0], h[5], h[1], status, ext, key, val, h[12:16], cas)
		out = out[binaryHeaderLen+bodyLen:]
	}
	if closed {
		b.WriteString("closed\n")
	}
	return b.String()
}
