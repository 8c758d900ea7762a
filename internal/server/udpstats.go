package server

import (
	"sync/atomic"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// withUDPTraffic is the engine as `stats` sees it, with the UDP server's
// traffic added to bytes_read and bytes_written and its sockets to the
// connection counts, as memcached counts its UDP connections with the
// rest. The UDP server starts after the engine, so it is found through udp
// once it exists.
type withUDPTraffic struct {
	protocol.Server
	udp *atomic.Pointer[reactor.UDPServer]
}

func (s withUDPTraffic) ServerStats() protocol.ServerStats {
	st := s.Server.ServerStats()
	if u := s.udp.Load(); u != nil {
		read, written := u.Traffic()
		st.BytesRead += read
		st.BytesWritten += written
		open, total := u.ConnCounts()
		st.CurrConnections += open
		st.ConnStructures += open
		st.TotalConnections += total
	}
	return st
}

func (s withUDPTraffic) ResetStats() {
	s.Server.ResetStats()
	if u := s.udp.Load(); u != nil {
		u.ResetStats()
	}
}
