package protocol

import "strconv"

// memcached's -vv lines for the binary protocol (proto_bin.c): each request
// header dumped in hex once it has arrived ("<fd Read binary protocol
// data:", then its 24 bytes four to a line), a line for some commands
// ("<fd GET k", "<fd TOUCH k", "<fd SET k Value len is 5", "Value len is
// 5" for append and prepend, "Deleting k", "incr k 1, 10, 0", "<fd STATS
// sub"), "authenticated() in cmd 0x.. is ..." under -S, and each response
// header it builds (">fd Writing bin response:"), after ">fd Writing an
// error: <text>" for an error. Stats packets are not dumped, as memcached
// builds them apart. A get hit's header is dumped with CAS 0: memcached
// dumps it before it fills the CAS in.

// vlogBinDump writes one header dump: title, then the header's bytes,
// each line of four led by dir, the connection id and indent.
func (s *Session) vlogBinDump(dir byte, title, indent string, hdr []byte) {
	b := append(s.log.line[:0], dir)
	b = strconv.AppendInt(b, int64(s.conn.id), 10)
	b = append(b, ' ')
	b = append(b, title...)
	for i, c := range hdr[:binaryHeaderLen] {
		if i%4 == 0 {
			b = append(b, '\n', dir)
			b = strconv.AppendInt(b, int64(s.conn.id), 10)
			b = append(b, indent...)
		}
		b = append(b, " 0x"...)
		b = append(b, hexDigits[c>>4], hexDigits[c&15])
	}
	b = append(b, '\n')
	s.log.line = b
	s.env.VerboseLog.Write(b)
}

const hexDigits = "0123456789abcdef"

// vlogBinRequest dumps the request header at the front of in, once per
// request (bin.headerDumped is cleared when the request is consumed).
func (s *Session) vlogBinRequest(in []byte) {
	if !s.bin.headerDumped {
		s.bin.headerDumped = true
		s.vlogBinDump('<', "Read binary protocol data:", "   ", in)
	}
}

// vlogBinResponse dumps the response header that starts at out[at:]; a get
// hit's with its CAS as 0 (hideCAS).
func (s *Session) vlogBinResponse(at int, hideCAS bool) {
	var hdr [binaryHeaderLen]byte
	copy(hdr[:], s.out[at:])
	if hideCAS {
		clear(hdr[16:])
	}
	s.vlogBinDump('>', "Writing bin response:", "  ", hdr[:])
}

// vlogBinCommand writes "<fd NAME key", with rest after the key.
func (s *Session) vlogBinCommand(name string, key []byte, rest string) {
	b := append([]byte(name+" "), key...)
	s.vlogLine('<', append(b, rest...))
}

// vlogBinText writes a line with no direction or id, as memcached's
// "Deleting k" and "incr k 1, 10, 0".
func (s *Session) vlogBinText(text []byte) {
	s.env.VerboseLog.Write(append(text, '\n'))
}
