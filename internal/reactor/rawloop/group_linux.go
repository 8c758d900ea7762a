//go:build linux

package rawloop

import (
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// Group is what the loops of one engine share: their lifecycle, the
// connection accounting and routing, and the stats the engine answers
// (protocol.Server's ServerStats, ResetStats and GroupStats).
type Group[E any] struct {
	reactor.LoopGroup // Serve, Shutdown, failures

	Name        string // the engine, as log lines name it ("epoll", "uring")
	Acct        *reactor.Accounting
	Router      *reactor.Router // which loop serves each accepted connection
	IdleTimeout time.Duration   // -o idle_timeout; 0: never
	MoreConns   func(now int64) []reactor.ConnLine
	Started     time.Time
	Labels      []string // each bound address as `stats conns` names it; Listener.Group indexes it
	// SendsRefs: the engine writes Conn.Refs, so its Sessions may leave
	// large values to it by reference (reactor.RefSender).
	SendsRefs bool
	Loops     []*Loop[E]
}

// NewGroup readies the shared part of an engine named name built from cfg.
func NewGroup[E any](name string, cfg *reactor.Config) *Group[E] {
	g := &Group[E]{Name: name, Acct: reactor.NewAccounting(cfg.MaxConns), IdleTimeout: cfg.IdleTimeout,
		MoreConns: cfg.MoreConns, Started: time.Now()}
	g.Init(name, nil, g.Acct.StopAccepting)
	return g
}

// Threads is the number of loops.
func (g *Group[E]) Threads() int { return len(g.Loops) }

// ServerStats implements protocol.Server for the engine: connection counts
// from the shared accounting, byte and yield totals summed over the loops.
func (g *Group[E]) ServerStats() protocol.ServerStats {
	s := protocol.ServerStats{Threads: uint64(len(g.Loops))}
	g.Acct.Fill(&s)
	for _, l := range g.Loops {
		s.BytesRead += l.Stats.BytesRead.Load()
		s.BytesWritten += l.Stats.BytesWritten.Load()
		s.ConnYields += l.Stats.Yields.Load()
	}
	return s
}

// ResetStats clears what `stats reset` clears in memcached.
func (g *Group[E]) ResetStats() {
	g.Acct.Reset()
	for _, l := range g.Loops {
		l.Stats.reset()
		l.io.ResetStats()
	}
}

// GroupStats writes `stats conns` and `stats reactors`.
func (g *Group[E]) GroupStats(group string, add func(name, value string)) bool {
	switch group {
	case "conns":
		now := time.Now().Unix()
		var lines []reactor.ConnLine
		for i, label := range g.Labels {
			// One line per bound address, as memcached has one socket
			// each; the loops' sockets of an address share it. The first
			// loop's descriptor names it.
			if fd := g.Loops[0].listenerFD(i); fd >= 0 {
				lines = append(lines, reactor.ConnLine{FD: fd, Addr: label,
					State: reactor.StateListening, IdleSecs: now - g.Started.Unix()})
			}
		}
		for _, l := range g.Loops {
			lines = l.connLines(lines, now)
		}
		reactor.WriteConns(lines, g.MoreConns, now, add)
	case "reactors":
		for _, l := range g.Loops {
			p := l.prefix()
			l.writeRouting(add, p)
			l.io.ReactorStats(add, p)
		}
	default:
		return false
	}
	return true
}
