package reactor

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// Accounting counts connections the way memcached does, for every engine:
// listening sockets are connections too. memcached allocates a conn for
// each listener, so they count in total_connections and
// connection_structures, and curr_connections is its live conn count minus
// one. With the default wildcard (two listeners) and three clients memcached
// reports curr 4, total 5; with one -l address and three clients, curr 3,
// total 4. Clients beyond MaxConns are rejected.
//
// All methods are safe for concurrent use; the hot ones are one atomic each.
type Accounting struct {
	maxConns  int64
	listeners atomic.Int64
	clients   atomic.Int64 // admitted and not yet released
	peak      atomic.Int64 // most clients at once

	total              atomic.Uint64 // conns ever opened, listeners included; `stats reset` clears it
	rejected           atomic.Uint64
	listenDisabled     atomic.Uint64
	idleKicks          atomic.Uint64
	tlsHandshakeErrors atomic.Uint64
	tlsProtoErrors     atomic.Uint64
	accepting          atomic.Bool

	// Listen pauses, for time_in_listen_disabled_us: memcached's accepting
	// is one switch; here each reactor pauses on its own, and the time
	// counted is while at least one is paused.
	pauseMu       sync.Mutex
	paused        int       // reactors (or listeners) paused now
	pausedSince   time.Time // when paused went from 0 to 1
	pausedTotalUs uint64    // closed pauses, microseconds
}

// NewAccounting starts the counts for an engine limited to maxConns
// clients (0: no limit).
func NewAccounting(maxConns int) *Accounting {
	a := &Accounting{maxConns: int64(maxConns)}
	a.accepting.Store(true)
	return a
}

// AddListeners records n listening sockets as memcached counts them: one
// per bound address, however many reactors share it.
func (a *Accounting) AddListeners(n int) {
	a.listeners.Add(int64(n))
	a.total.Add(uint64(n))
}

// Admit counts an accepted client; false means it is over -c and must be
// sent RejectMessage and closed (it is then counted as rejected).
func (a *Accounting) Admit() bool {
	n := a.clients.Add(1)
	if a.maxConns > 0 && n > a.maxConns {
		a.clients.Add(-1)
		a.rejected.Add(1) // memcached never opens a conn for it: not in total
		return false
	}
	a.total.Add(1)
	for {
		p := a.peak.Load()
		if n <= p || a.peak.CompareAndSwap(p, n) {
			return true
		}
	}
}

// Release forgets an admitted client that has been closed.
func (a *Accounting) Release() { a.clients.Add(-1) }

// Clients is the number of admitted clients still open.
func (a *Accounting) Clients() int { return int(max(a.clients.Load(), 0)) }

// ListenDisabled counts one pause of accepting for lack of descriptors
// (memcached's listen_disabled_num); ListenResumed must follow it.
func (a *Accounting) ListenDisabled() {
	a.listenDisabled.Add(1)
	a.pauseMu.Lock()
	if a.paused == 0 {
		a.pausedSince = time.Now()
	}
	a.paused++
	a.pauseMu.Unlock()
}

// ListenResumed ends a pause ListenDisabled began.
func (a *Accounting) ListenResumed() {
	a.pauseMu.Lock()
	if a.paused > 0 {
		a.paused--
		if a.paused == 0 {
			a.pausedTotalUs += uint64(time.Since(a.pausedSince).Microseconds())
		}
	}
	a.pauseMu.Unlock()
}

// listenDisabledUs is the time accepting was paused, in the pauses that
// ended (memcached adds a pause when it ends).
func (a *Accounting) listenDisabledUs() uint64 {
	a.pauseMu.Lock()
	defer a.pauseMu.Unlock()
	return a.pausedTotalUs
}

// IdleKick counts one client closed by -o idle_timeout (idle_kicks).
func (a *Accounting) IdleKick() { a.idleKicks.Add(1) }

// TLSHandshakeError counts a client whose TLS handshake failed
// (memcached's ssl_handshake_errors).
func (a *Accounting) TLSHandshakeError() { a.tlsHandshakeErrors.Add(1) }

// TLSProtoError counts a TLS read or write that failed on the protocol
// after the handshake (memcached's ssl_proto_errors).
func (a *Accounting) TLSProtoError() { a.tlsProtoErrors.Add(1) }

// StopAccepting marks the engine as no longer accepting (accepting_conns 0).
func (a *Accounting) StopAccepting() { a.accepting.Store(false) }

// Reset clears what memcached's `stats reset` clears.
func (a *Accounting) Reset() {
	a.total.Store(0)
	a.rejected.Store(0)
	a.listenDisabled.Store(0)
	a.idleKicks.Store(0)
	a.tlsHandshakeErrors.Store(0) // (memcached's struct stats, zeroed whole)
	a.tlsProtoErrors.Store(0)
	a.pauseMu.Lock()
	a.pausedTotalUs = 0
	a.pauseMu.Unlock()
}

// Fill writes the connection counts into s; the engine adds its byte,
// yield and thread numbers.
func (a *Accounting) Fill(s *protocol.ServerStats) {
	live := a.listeners.Load() + max(a.clients.Load(), 0)
	s.CurrConnections = uint64(max(live-1, 0))
	s.TotalConnections = a.total.Load()
	s.RejectedConnections = a.rejected.Load()
	s.ConnStructures = uint64(a.listeners.Load() + max(a.peak.Load(), 0))
	s.ListenDisabledNum = a.listenDisabled.Load()
	s.ListenDisabledUs = a.listenDisabledUs()
	s.IdleKicks = a.idleKicks.Load()
	s.SSLHandshakeErrors = a.tlsHandshakeErrors.Load()
	s.SSLProtoErrors = a.tlsProtoErrors.Load()
	s.AcceptingConns = a.accepting.Load()
}
