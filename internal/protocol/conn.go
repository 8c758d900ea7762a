package protocol

import "net/netip"

// connInfo is what a Session knows of the connection it serves: the
// engine's ids for it, where it comes from, the protocol it speaks, and
// why it ends.
type connInfo struct {
	// id is the engine's id for the connection (memcached's fd, printed
	// in -vv lines and watch's cfd=).
	id int
	// datagramID is the UDP socket's id for a Session serving datagrams
	// (Datagram), which reset keeps; 0 for a stream connection.
	datagramID int
	// wakeup is the engine's signal for a watcher with lines to send (see
	// SetWakeup), set once per Session.
	wakeup func()
	// peer and transport are the client's address and "tcp"/"local" for
	// watch connevents lines (OpenedFrom); peer is invalid when unknown.
	peer      netip.AddrPort
	transport string
	// listenerBinding, when listenerBound, is the protocol the accepting
	// listener's "proto[...]:" prefix names (Env.ListenerBinding).
	listenerBinding Binding
	listenerBound   bool
	// proto is what the connection has been found to speak.
	proto connProto
	// sendsRefs: the engine writes a large value from the store's memory
	// (SendRefs, byref.go).
	sendsRefs bool
	// dropDatagram: a command in a datagram handed the connection to a
	// stream (metadump, watch) that memcached's UDP connection cannot
	// carry; the rest of the datagram is dropped.
	dropDatagram bool
	// quit is set by `quit`; closeReason is the conn_close reason of a
	// Close status ("normal" for quit, "error" otherwise), "" before one.
	quit        bool
	closeReason string
}

// SetWakeup registers fn, which a watching Session calls (from another
// goroutine, at most once until the next Process) when log lines arrive for
// it; the engine should then call Process. fn may run while a store shard is
// locked (an eviction's line): it must only signal (an eventfd write, a
// non-blocking channel send), never block or call into a Session or the
// store. Engines set it once per Session.
func (s *Session) SetWakeup(fn func()) { s.conn.wakeup = fn }

// Opened tells the Session the engine's id for its new connection (the file
// descriptor: memcached prints it in -vv lines and watch's cfd=) and logs
// the connection at -vv as memcached does.
func (s *Session) Opened(id int) {
	s.conn.id = id
	if s.env.verboseOn() {
		switch s.binding() { // memcached's words, periods included
		case BindingASCII:
			s.vlogf('<', "new ascii client connection.")
		case BindingBinary:
			s.vlogf('<', "new binary client connection.")
		default:
			s.vlogf('<', "new auto-negotiating client connection")
		}
	}
	if s.env.watching()&logConnEvents != 0 {
		s.logConn("conn_new", "")
	}
}

// OpenedFrom is Opened for an engine that knows the client's address and
// transport ("tcp", "udp" or "local", peer unused for local): `watch
// connevents` lines then carry memcached's rip= rport= transport=.
func (s *Session) OpenedFrom(id int, transport string, peer netip.AddrPort) {
	s.conn.peer, s.conn.transport = peer, transport
	if f := s.env.ListenerBinding; f != nil && transport == "tcp" {
		s.conn.listenerBinding, s.conn.listenerBound = f(id)
	}
	s.Opened(id)
}

// ClosedBy gives the reason the engine closes the connection ("idle_timeout",
// "error"), which `watch connevents` logs at Reset, unless the Session
// already has its own (quit, a protocol error).
func (s *Session) ClosedBy(reason string) {
	if s.conn.closeReason == "" {
		s.conn.closeReason = reason
	}
}

// closing gives a Close status its conn_close reason, unless the
// connection already has one: "normal" after quit, else "error".
func (c *connInfo) closing() {
	if c.closeReason != "" {
		return
	}
	c.closeReason = "error"
	if c.quit {
		c.closeReason = "normal"
	}
}

// logClosed logs the end of a stream connection at -vv and to `watch
// connevents`, and ends its own watch, if any, first: a closing watcher is
// not woken.
func (s *Session) logClosed() {
	stream := s.conn.id != 0 && s.conn.datagramID == 0
	if stream && s.env.verboseOn() {
		s.vlogf('<', "connection closed.")
	}
	wasWatcher := s.stream.watch != nil
	s.stopWatch()
	if stream && s.env.watching()&logConnEvents != 0 {
		reason := s.conn.closeReason
		switch {
		case reason != "":
		case wasWatcher:
			// memcached's logger closes a watcher without setting a
			// reason, and the unset one reads as error.
			reason = "error"
		default:
			reason = "normal" // the client closed
		}
		s.logConn("conn_close", reason)
	}
}

// reset prepares the state for a new connection. A Session serving
// datagrams keeps its socket's id, and every Session its engine's wakeup.
func (c *connInfo) reset() {
	*c = connInfo{id: c.datagramID, datagramID: c.datagramID, wakeup: c.wakeup}
}
