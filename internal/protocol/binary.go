package protocol

import "encoding/binary"

// gocached speaks only the text protocol. A connection whose first byte is the
// binary protocol's request magic gets one binary error response, so that a
// binary client fails fast with a readable error instead of waiting for an
// answer that never comes, and is then closed.

const (
	binaryMagicRequest  = 0x80
	binaryMagicResponse = 0x81
	binaryHeaderLen     = 24
	// binaryStatusUnknownCommand is the binary protocol's "Unknown command".
	binaryStatusUnknownCommand = 0x0081
	binaryUnknownCommandText   = "Unknown command"
)

// appendBinaryError appends a response to the binary request at the front of
// req. The opcode and opaque are echoed when the client's header has arrived
// in full; the reply is sent at once either way.
func appendBinaryError(out, req []byte) []byte {
	var h [binaryHeaderLen]byte
	h[0] = binaryMagicResponse
	if len(req) >= binaryHeaderLen {
		h[1] = req[1]              // opcode
		copy(h[12:16], req[12:16]) // opaque
	}
	binary.BigEndian.PutUint16(h[6:8], binaryStatusUnknownCommand)
	binary.BigEndian.PutUint32(h[8:12], uint32(len(binaryUnknownCommandText)))
	out = append(out, h[:]...)
	return append(out, binaryUnknownCommandText...)
}
