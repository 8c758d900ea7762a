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
	// dropDatagram: a command in a datagram handed the connection to a
	// stream (metadump, watch) that memcached's UDP connection cannot
	// carry; the rest of the datagram is dropped.
	dropDatagram bool
	// quit is set by `quit`; closeReason is the conn_close reason of a
	// Close status ("normal" for quit, "error" otherwise), "" before one.
	quit        bool
	closeReason string
}

// reset prepares the state for a new connection. A Session serving
// datagrams keeps its socket's id, and every Session its engine's wakeup.
func (c *connInfo) reset() {
	*c = connInfo{id: c.datagramID, datagramID: c.datagramID, wakeup: c.wakeup}
}
