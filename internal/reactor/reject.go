package reactor

import (
	"io"
	"net"
	"time"
)

// A client beyond -c gets RejectMessage and then an orderly close. Closing
// a socket whose peer already sent a request makes the kernel answer with a
// reset, and a reset can destroy the message in flight, so the refused
// socket first stops sending (FIN after the message) and then has its input
// drained for a bounded time before it is closed. The lingering is bounded
// too: beyond rejectLingerMax refused clients at once, the rest are closed
// at once, so a flood of connections cannot pile up goroutines.
const (
	rejectLinger    = time.Second // how long a refused client's input is drained
	rejectDrainMax  = 64 << 10    // bytes read from it at most
	rejectLingerMax = 64          // refused clients lingering at once
)

var lingering = make(chan struct{}, rejectLingerMax)

// RejectConn refuses nc (the portable engine's form of RejectFD).
func RejectConn(nc net.Conn) {
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write(RejectMessage); err != nil {
		nc.Close()
		return
	}
	tc, ok := nc.(interface{ CloseWrite() error })
	if !ok {
		nc.Close()
		return
	}
	select {
	case lingering <- struct{}{}:
	default:
		nc.Close()
		return
	}
	go func() {
		defer func() { <-lingering }()
		tc.CloseWrite()
		nc.SetReadDeadline(time.Now().Add(rejectLinger))
		io.Copy(io.Discard, io.LimitReader(nc, rejectDrainMax))
		nc.Close()
	}()
}
