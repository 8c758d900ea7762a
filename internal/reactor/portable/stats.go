package portable

import (
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// totals are counters kept per connection (so the request path touches no
// shared cache line) and summed when `stats` asks.
type totals struct {
	bytesRead, bytesWritten, yields uint64
}

func (t *totals) add(o totals) {
	t.bytesRead += o.bytesRead
	t.bytesWritten += o.bytesWritten
	t.yields += o.yields
}

func (t totals) minus(o totals) totals {
	return totals{t.bytesRead - o.bytesRead, t.bytesWritten - o.bytesWritten, t.yields - o.yields}
}

// totalsLocked sums everything since start; e.mu must be held, so that a
// connection moving from e.conns to e.retired is counted exactly once.
func (e *engine) totalsLocked() totals {
	t := e.retired
	for c := range e.conns {
		t.add(c.totals())
	}
	return t
}

// ServerStats implements protocol.Server.
func (e *engine) ServerStats() protocol.ServerStats {
	e.mu.Lock()
	t := e.totalsLocked().minus(e.base)
	e.mu.Unlock()
	s := protocol.ServerStats{
		BytesRead:    t.bytesRead,
		BytesWritten: t.bytesWritten,
		ConnYields:   t.yields,
		Threads:      uint64(e.threads),
	}
	e.acct.Fill(&s)
	return s
}

// ResetStats implements protocol.Server: the totals memcached's `stats reset`
// clears start again from zero; current counts are untouched.
func (e *engine) ResetStats() {
	e.acct.Reset()
	e.mu.Lock()
	e.base = e.totalsLocked()
	e.mu.Unlock()
}

// GroupStats implements protocol.Server for `stats conns`.
func (e *engine) GroupStats(group string, add func(name, value string)) bool {
	if group != "conns" {
		return false
	}
	now := time.Now().Unix()
	var lines []reactor.ConnLine
	for _, l := range e.listeners {
		lines = append(lines, reactor.ConnLine{FD: l.fd, Addr: reactor.AddrString(l.ln.Addr()),
			State: reactor.StateListening, IdleSecs: now - e.started.Unix()})
	}
	e.mu.Lock()
	for c := range e.conns {
		lines = append(lines, reactor.ConnLine{
			FD:         c.fd,
			Addr:       reactor.AddrString(c.nc.RemoteAddr()),
			ListenAddr: reactor.AddrString(c.nc.LocalAddr()),
			State:      reactor.ConnState(c.state.Load()),
			IdleSecs:   now - c.lastCmd.Load(),
		})
	}
	e.mu.Unlock()
	reactor.WriteConns(lines, e.cfg.MoreConns, now, add)
	return true
}
