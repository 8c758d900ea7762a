package protocol

import (
	"log/slog"

	"github.com/gocached/gocached/internal/store"
)

// The binary protocol's framing and dispatch, following memcached 1.6.18's
// dispatch_bin_command: a request is looked at once its header, extras and
// key have arrived; the checks run in memcached's order and fail the way
// memcached fails them (some with an error reply, some by closing, one by
// swallowing the body); only commands that carry a value wait for it.

// binaryRequest handles the request at the front of in. It returns how many
// bytes it consumed, or minus the number it needs when the request has not
// fully arrived (then nothing was done).
func (s *Session) binaryRequest(in []byte) (int, Status) {
	if len(in) < binaryHeaderLen {
		return -binaryHeaderLen, NeedMore
	}
	if s.log.verbose {
		s.vlogBinRequest(in)
	}
	if in[0] != binaryMagicRequest {
		// memcached closes without a word to the client (and a line at -v).
		slog.Info("binary protocol: invalid magic, closing connection", "magic", in[0])
		return 0, Close
	}
	h := parseBinHeader(in)
	s.bin.header = h
	head := binaryHeaderLen + int(h.extLen) + int(h.keyLen)
	if head > binaryReadBuffer {
		// memcached reads a binary request's header, extras and key into
		// its fixed 16 KB read buffer: one that does not fit never
		// completes, and once the buffer is full its read of 0 bytes is
		// taken for the client closing. No reply.
		if len(in) < binaryReadBuffer {
			return -binaryReadBuffer, NeedMore
		}
		slog.Info("binary protocol: request header over the read buffer, closing connection", "keylen", h.keyLen)
		return 0, Close
	}
	if len(in) < head {
		// memcached waits for the extras and key with the header, in
		// conn_read; only a value arrives in conn_nread.
		s.input.wantLine = true
		return -head, NeedMore
	}
	ext := in[binaryHeaderLen : binaryHeaderLen+int(h.extLen)]
	key := in[binaryHeaderLen+int(h.extLen) : head]
	if uint32(h.keyLen) > h.bodyLen || uint32(h.keyLen)+uint32(h.extLen) > h.bodyLen {
		s.binError(&s.bin.header, statusUnknownCommand)
		return head, Close
	}
	if h.bodyLen > binaryBodyMax {
		// memcached 1.6.42 on (229cf41): refused before anything is read
		// of it, the connection closed after the reply.
		s.binError(&s.bin.header, statusInvalid)
		return head, Close
	}
	if s.env.SASL != nil && s.log.verbose {
		ok := "false"
		if s.auth.saslPassed || saslAllowed(h.opcode) {
			ok = "true"
		}
		s.vlogBinText([]byte("authenticated() in cmd 0x" + string([]byte{hexDigits[h.opcode>>4], hexDigits[h.opcode&15]}) + " is " + ok))
	}
	if s.env.SASL != nil && !s.auth.saslPassed && !saslAllowed(h.opcode) {
		s.binError(&s.bin.header, statusAuthError)
		return head, Close
	}
	base, quiet := quietBase(h.opcode)
	s.bin.quiet = quiet
	if int(h.keyLen) > store.MaxKeyLen {
		return head, s.binProtocolError()
	}
	vlen := int(h.bodyLen) - int(h.extLen) - int(h.keyLen)
	empty := h.extLen == 0 && h.keyLen == 0 && h.bodyLen == 0
	switch base {
	case opVersion:
		if !empty {
			return head, s.binProtocolError()
		}
		s.binReply(&s.bin.header, nil, nil, []byte(s.env.version()), 0)
	case opFlush:
		if h.keyLen != 0 || h.bodyLen != uint32(h.extLen) || (h.extLen != 0 && h.extLen != 4) {
			return head, s.binProtocolError()
		}
		s.binFlush(ext)
	case opNoop:
		if !empty {
			return head, s.binProtocolError()
		}
		s.binReply(&s.bin.header, nil, nil, nil, 0)
	case opSet, opAdd, opReplace:
		if h.extLen != 8 || h.keyLen == 0 || h.bodyLen < uint32(h.keyLen)+8 {
			return head, s.binProtocolError()
		}
		return s.binStore(in, head, base, ext, key, vlen)
	case opAppend, opPrepend:
		if h.keyLen == 0 || h.extLen != 0 {
			return head, s.binProtocolError()
		}
		return s.binStore(in, head, base, nil, key, vlen)
	case opGet, opGetK:
		if h.extLen != 0 || h.bodyLen != uint32(h.keyLen) || h.keyLen == 0 {
			return head, s.binProtocolError()
		}
		s.binGet(base, nil, key)
	case opTouch, opGAT, opGATK:
		// memcached checks neither the body length nor the value here:
		// bytes beyond the key are read as the next request.
		if h.extLen != 4 || h.keyLen == 0 {
			return head, s.binProtocolError()
		}
		s.binGet(base, ext, key)
	case opDelete:
		if h.keyLen == 0 || h.extLen != 0 || h.bodyLen != uint32(h.keyLen) {
			return head, s.binProtocolError()
		}
		s.binDelete(key)
	case opIncrement, opDecrement:
		if h.keyLen == 0 || h.extLen != 20 || h.bodyLen != uint32(h.keyLen)+20 {
			return head, s.binProtocolError()
		}
		s.binArith(base == opDecrement, ext, key)
	case opStat:
		if h.extLen != 0 {
			return head, s.binProtocolError()
		}
		s.binStats(key)
	case opQuit:
		if !empty {
			return head, s.binProtocolError()
		}
		s.binReply(&s.bin.header, nil, nil, nil, 0)
		s.conn.quit = true // watch connevents: reason=normal
		return head, Close
	case opSASLList:
		if !empty {
			return head, s.binProtocolError()
		}
		if s.env.SASL == nil {
			s.binError(&s.bin.header, statusUnknownCommand)
			return head, NeedMore
		}
		s.auth.saslPassed = false
		s.binReply(&s.bin.header, nil, nil, s.env.SASL.mechList, 0)
	case opSASLAuth, opSASLStep:
		if h.extLen != 0 || h.keyLen == 0 {
			return head, s.binProtocolError()
		}
		return s.binSASL(in, head, key, vlen)
	default:
		// memcached swallows bodylen bytes after the header, extras and key
		// it has already read: a request with extras or a key leaves the
		// stream out of step, in memcached and therefore here.
		s.binError(&s.bin.header, statusUnknownCommand)
		s.input.swallow = int64(h.bodyLen)
	}
	return head, NeedMore
}

// binProtocolError answers a malformed request with "Invalid arguments" and
// closes, as memcached's handle_binary_protocol_error does.
func (s *Session) binProtocolError() Status {
	s.binError(&s.bin.header, statusInvalid)
	slog.Info("binary protocol: malformed request, closing connection", "opcode", s.bin.header.opcode)
	return Close
}

// binError appends an error response with memcached's text for status.
// Quiet commands get their errors too.
func (s *Session) binError(h *binHeader, status uint16) {
	s.binErrorText(h, status, statusText(status))
}

func (s *Session) binErrorText(h *binHeader, status uint16, text string) {
	at := len(s.out)
	s.out = appendBinHeader(s.out, h.opcode, status, 0, 0, uint32(len(text)), h.opaque, 0)
	if s.log.verbose {
		s.vlogLine('>', []byte("Writing an error: "+text))
		s.vlogBinResponse(at, false)
	}
	s.out = append(s.out, text...)
}

// binReply appends a success response, unless the command is a quiet one
// (a quiet get's hit is sent by binGet itself).
func (s *Session) binReply(h *binHeader, ext, key, value []byte, cas uint64) {
	if s.bin.quiet {
		return
	}
	body := len(ext) + len(key) + len(value)
	at := len(s.out)
	s.out = appendBinHeader(s.out, h.opcode, statusOK, uint8(len(ext)), uint16(len(key)), uint32(body), h.opaque, cas)
	if s.log.verbose {
		s.vlogBinResponse(at, false)
	}
	s.out = append(s.out, ext...)
	s.out = append(s.out, key...)
	s.out = append(s.out, value...)
}

// binSASL reads SASL_AUTH/SASL_STEP data and runs the exchange.
func (s *Session) binSASL(in []byte, head int, mech []byte, vlen int) (int, Status) {
	if s.env.SASL == nil {
		s.binError(&s.bin.header, statusUnknownCommand)
		s.input.swallow = int64(vlen)
		return head, NeedMore
	}
	if len(mech) > saslMaxMechLen {
		s.binError(&s.bin.header, statusInvalid)
		s.input.swallow = int64(vlen)
		return head, NeedMore
	}
	if vlen > s.env.Store.MaxValueSize(len(mech), 0) {
		s.binError(&s.bin.header, statusNoMemory)
		s.input.swallow = int64(vlen)
		return head, NeedMore
	}
	if vlen > saslMaxData {
		// No mechanism's message is this long; memcached would hold it in
		// an item (inside -m), gocached would hold it in the connection's
		// read buffer, outside -m, for a client not yet logged in. It is
		// swallowed as it comes and fails the exchange, as such data would.
		s.saslRefuse(&s.bin.header)
		s.input.swallow = int64(vlen)
		return head, NeedMore
	}
	if len(in) < head+vlen {
		return -(head + vlen), NeedMore
	}
	s.saslAuth(&s.bin.header, mech, in[head:head+vlen], s.bin.header.opcode == opSASLStep)
	return head + vlen, NeedMore
}
