package reactor

import (
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// goTotals are counters kept per connection (so the request path touches no
// shared cache line) and summed when `stats` asks.
type goTotals struct {
	bytesRead, bytesWritten, yields uint64
	total, rejected, listenDisabled uint64
}

func (t *goTotals) add(o goTotals) {
	t.bytesRead += o.bytesRead
	t.bytesWritten += o.bytesWritten
	t.yields += o.yields
	t.total += o.total
	t.rejected += o.rejected
	t.listenDisabled += o.listenDisabled
}

func (t goTotals) minus(o goTotals) goTotals {
	return goTotals{
		bytesRead:      t.bytesRead - o.bytesRead,
		bytesWritten:   t.bytesWritten - o.bytesWritten,
		yields:         t.yields - o.yields,
		total:          t.total - o.total,
		rejected:       t.rejected - o.rejected,
		listenDisabled: t.listenDisabled - o.listenDisabled,
	}
}

// totalsLocked sums everything since start; e.mu must be held, so that a
// connection moving from e.conns to e.retired is counted exactly once.
func (e *goEngine) totalsLocked() goTotals {
	t := e.retired
	for c := range e.conns {
		t.add(c.totals())
	}
	t.total = e.total.Load()
	t.rejected = e.rejected.Load()
	t.listenDisabled = e.listenDisabled.Load()
	return t
}

// ServerStats implements protocol.Server.
func (e *goEngine) ServerStats() protocol.ServerStats {
	e.mu.Lock()
	t := e.totalsLocked().minus(e.resetBase)
	curr := len(e.conns)
	structures := e.structures + len(e.listeners)
	e.mu.Unlock()
	return protocol.ServerStats{
		CurrConnections:     uint64(curr),
		TotalConnections:    t.total,
		RejectedConnections: t.rejected,
		ConnStructures:      uint64(structures),
		ListenDisabledNum:   t.listenDisabled,
		AcceptingConns:      !e.closed.Load(),
		BytesRead:           t.bytesRead,
		BytesWritten:        t.bytesWritten,
		ConnYields:          t.yields,
		Threads:             uint64(runtime.GOMAXPROCS(0)),
	}
}

// ResetStats implements protocol.Server: the totals memcached's `stats reset`
// clears start again from zero; current counts are untouched.
func (e *goEngine) ResetStats() {
	e.mu.Lock()
	e.resetBase = e.totalsLocked()
	e.mu.Unlock()
}

// GroupStats implements protocol.Server for `stats conns`, in memcached's
// format: listeners first, then clients, each named by its descriptor.
func (e *goEngine) GroupStats(group string, add func(name, value string)) bool {
	if group != "conns" {
		return false
	}
	now := time.Now().Unix()
	for _, l := range e.listeners {
		p := strconv.Itoa(l.fd) + ":"
		add(p+"addr", commonAddrString(l.ln.Addr()))
		add(p+"state", "conn_listening")
		add(p+"secs_since_last_cmd", strconv.FormatInt(max(now-l.lastAccept.Load(), 0), 10))
	}
	e.mu.Lock()
	conns := make([]*goConn, 0, len(e.conns))
	for c := range e.conns {
		conns = append(conns, c)
	}
	e.mu.Unlock()
	slices.SortFunc(conns, func(a, b *goConn) int { return a.fd - b.fd })
	for _, c := range conns {
		p := strconv.Itoa(c.fd) + ":"
		add(p+"addr", commonAddrString(c.nc.RemoteAddr()))
		add(p+"listen_addr", commonAddrString(c.listener.ln.Addr()))
		add(p+"state", goStateNames[c.state.Load()])
		add(p+"secs_since_last_cmd", strconv.FormatInt(max(now-c.lastCmd.Load(), 0), 10))
	}
	return true
}
