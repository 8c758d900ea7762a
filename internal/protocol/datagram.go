package protocol

// Datagram makes the Session serve the UDP datagrams arriving on the
// socket whose descriptor is id, as memcached's UDP connections do: each
// datagram is text or binary by its first byte whatever -B says (memcached
// reads UDP that way and never negotiates, so nothing is logged about it),
// no connection is logged as opened or closed, and -vv lines carry id.
// Reset, which the UDP server calls after every datagram, keeps this.
func (s *Session) Datagram(id int) {
	s.conn.datagramID = id
	s.conn.id = id
}

// datagramProto is the protocol of a datagram starting with first.
func datagramProto(first byte) connProto {
	if first == binaryMagicRequest {
		return protoBinary
	}
	return protoText
}
