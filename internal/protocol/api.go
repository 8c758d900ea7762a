package protocol

// This file is the contract between the protocol and the engines (internal/reactor).
// The engines do all I/O; a Session turns request bytes into reply bytes.

import (
	"sync/atomic"

	"github.com/gocached/gocached/internal/store"
)

// Settings are the server settings `stats settings` reports and the parser obeys.
type Settings struct {
	Version         string // "1.6.x-gocached" style version string for `version`/`stats`
	Port, UDPPort   int
	Interface       string // -l
	DomainSocket    string // -s; "" = none
	Umask           uint32 // -a, the unix socket's mode (memcached prints it in octal)
	MaxConns        int    // -c
	Threads         int    // reactors (or GOMAXPROCS on the portable engine)
	MaxBytes        int64  // -m in bytes
	ItemSizeMax     int    // -I in bytes
	Evictions       bool   // !-M
	CASEnabled      bool   // !-C
	ReqsPerEvent    int    // -R
	IdleTimeout     int    // -o idle_timeout, in seconds; 0 = off
	TCPBacklog      int    // -b
	BindingProtocol string // "ascii"
	Verbosity       *atomic.Int32
}

// ServerStats are the connection-level totals only an engine knows.
type ServerStats struct {
	CurrConnections     uint64
	TotalConnections    uint64
	RejectedConnections uint64
	ConnStructures      uint64
	ListenDisabledNum   uint64
	AcceptingConns      bool
	BytesRead           uint64
	BytesWritten        uint64
	ConnYields          uint64
	IdleKicks           uint64 // connections closed by -o idle_timeout
	Threads             uint64
	// NAPI routing (epoll engine): connections whose NAPI ID matched no
	// reactor, and connections placed round-robin for want of one.
	UnexpectedNAPIIDs  uint64
	RoundRobinFallback uint64
}

// Server is implemented by an engine so that `stats` can report what the engine owns.
type Server interface {
	ServerStats() ServerStats
	// ResetStats clears the engine's resettable totals (`stats reset`).
	ResetStats()
	// GroupStats writes the lines of `stats <group>` for groups the engine owns
	// ("conns", "reactors") by calling add for each name/value; it returns false
	// when the engine does not know the group.
	GroupStats(group string, add func(name, value string)) bool
}

// Env is what every Session of one server shares.
type Env struct {
	Store     *store.Store
	Settings  *Settings
	Server    Server
	StartUnix int64 // process start, for `uptime`

	// Protocol is the -B binding (binding.go); the zero value is memcached's
	// default, auto-negotiation by the first byte.
	Protocol Binding
	// SASL, when set, makes binary clients authenticate (memcached's -S with
	// a MEMCACHED_SASL_PWDB password file, sasl.go); it implies binary-only
	// connections, as -S implies -B binary in memcached.
	SASL *SASL

	// counters are the totals only the protocol sees; the zero value is ready.
	counters protoCounters
}

// protoCounters are shared by every Session of one Env.
type protoCounters struct {
	storeTooLarge atomic.Uint64 // values refused before their data was read
	storeNoMemory atomic.Uint64 // stores the store refused for lack of memory
	moreCounters                // the meta and binary protocols' (counters.go)
}

func (c *protoCounters) reset() {
	c.storeTooLarge.Store(0)
	c.storeNoMemory.Store(0)
	c.moreCounters.reset()
}

// Status tells the engine what to do after Process returns.
type Status uint8

const (
	// NeedMore: every complete request in the input was handled; read more.
	// Want reports how large the unconsumed request needs the buffer to be.
	NeedMore Status = iota
	// Yield: the -R limit of requests was reached with input left over; the
	// engine should send the replies, count a conn_yield, and call Process
	// again on the rest later.
	Yield
	// Close: send the replies produced so far, then close the connection
	// (quit, an unrecoverable protocol error, a failed SASL check).
	Close
)
