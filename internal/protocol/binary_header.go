package protocol

import "encoding/binary"

// The binary protocol's wire format: memcached's 24-byte headers, opcodes,
// status codes and the error texts memcached 1.6.18 sends with them.

const (
	binaryMagicRequest  = 0x80
	binaryMagicResponse = 0x81
	binaryHeaderLen     = 24
	// binaryReadBuffer is memcached's READ_BUFFER_SIZE, which a binary
	// connection's read buffer never grows beyond.
	binaryReadBuffer = 16384
	// binaryBodyMax is memcached's ITEM_SIZE_MAX_UPPER_LIMIT, the largest
	// body length it reads (1.6.42 on).
	binaryBodyMax = 1 << 30
)

// Opcodes memcached 1.6.18 implements.
const (
	opGet        = 0x00
	opSet        = 0x01
	opAdd        = 0x02
	opReplace    = 0x03
	opDelete     = 0x04
	opIncrement  = 0x05
	opDecrement  = 0x06
	opQuit       = 0x07
	opFlush      = 0x08
	opGetQ       = 0x09
	opNoop       = 0x0a
	opVersion    = 0x0b
	opGetK       = 0x0c
	opGetKQ      = 0x0d
	opAppend     = 0x0e
	opPrepend    = 0x0f
	opStat       = 0x10
	opSetQ       = 0x11
	opAddQ       = 0x12
	opReplaceQ   = 0x13
	opDeleteQ    = 0x14
	opIncrementQ = 0x15
	opDecrementQ = 0x16
	opQuitQ      = 0x17
	opFlushQ     = 0x18
	opAppendQ    = 0x19
	opPrependQ   = 0x1a
	opTouch      = 0x1c
	opGAT        = 0x1d
	opGATQ       = 0x1e
	opSASLList   = 0x20
	opSASLAuth   = 0x21
	opSASLStep   = 0x22
	opGATK       = 0x23
	opGATKQ      = 0x24
)

// Response status codes.
const (
	statusOK             = 0x00
	statusKeyNotFound    = 0x01
	statusKeyExists      = 0x02
	statusTooLarge       = 0x03
	statusInvalid        = 0x04
	statusNotStored      = 0x05
	statusDeltaBadValue  = 0x06
	statusAuthError      = 0x20
	statusAuthContinue   = 0x21
	statusUnknownCommand = 0x81
	statusNoMemory       = 0x82
)

// statusText is the body memcached sends with an error status when the
// code path gives no text of its own.
func statusText(status uint16) string {
	switch status {
	case statusNoMemory:
		return "Out of memory"
	case statusUnknownCommand:
		return "Unknown command"
	case statusKeyNotFound:
		return "Not found"
	case statusInvalid:
		return "Invalid arguments"
	case statusKeyExists:
		return "Data exists for key."
	case statusTooLarge:
		return "Too large."
	case statusDeltaBadValue:
		return "Non-numeric server-side value for incr or decr"
	case statusNotStored:
		return "Not stored."
	case statusAuthError:
		return "Auth failure."
	}
	return "UNHANDLED ERROR"
}

// quietBase maps a quiet opcode to the command it is a quiet form of;
// memcached runs the command with noreply set and answers with the opcode
// the client sent.
func quietBase(op uint8) (base uint8, quiet bool) {
	switch op {
	case opSetQ:
		return opSet, true
	case opAddQ:
		return opAdd, true
	case opReplaceQ:
		return opReplace, true
	case opDeleteQ:
		return opDelete, true
	case opIncrementQ:
		return opIncrement, true
	case opDecrementQ:
		return opDecrement, true
	case opQuitQ:
		return opQuit, true
	case opFlushQ:
		return opFlush, true
	case opAppendQ:
		return opAppend, true
	case opPrependQ:
		return opPrepend, true
	case opGetQ:
		return opGet, true
	case opGetKQ:
		return opGetK, true
	case opGATQ:
		return opGAT, true
	case opGATKQ:
		return opGATK, true
	}
	return op, false
}

// binHeader is a request header in host order.
type binHeader struct {
	opcode  uint8
	keyLen  uint16
	extLen  uint8
	bodyLen uint32
	opaque  [4]byte // echoed byte for byte
	cas     uint64
}

func parseBinHeader(b []byte) binHeader {
	var h binHeader
	h.opcode = b[1]
	h.keyLen = binary.BigEndian.Uint16(b[2:4])
	h.extLen = b[4]
	h.bodyLen = binary.BigEndian.Uint32(b[8:12])
	copy(h.opaque[:], b[12:16])
	h.cas = binary.BigEndian.Uint64(b[16:24])
	return h
}

// appendBinHeader appends a response header.
func appendBinHeader(b []byte, opcode uint8, status uint16, extLen uint8, keyLen uint16, bodyLen uint32, opaque [4]byte, cas uint64) []byte {
	var h [binaryHeaderLen]byte
	h[0] = binaryMagicResponse
	h[1] = opcode
	binary.BigEndian.PutUint16(h[2:4], keyLen)
	h[4] = extLen
	binary.BigEndian.PutUint16(h[6:8], status)
	binary.BigEndian.PutUint32(h[8:12], bodyLen)
	copy(h[12:16], opaque[:])
	binary.BigEndian.PutUint64(h[16:24], cas)
	return append(b, h[:]...)
}
