package protocol

// This file is the contract between the protocol and the engines (internal/reactor).
// The engines do all I/O; a Session turns request bytes into reply bytes.

import (
	"io"
	"sync/atomic"

	"github.com/gocached/gocached/internal/store"
)

// Settings are the server settings `stats settings` reports and the parser obeys.
type Settings struct {
	Version         string // "1.6.x-gocached" style version string for `version`/`stats`
	Port, UDPPort   int
	Interface       string // -l
	DomainSocket    string // -s; "" = none
	Umask           string // -a as given, in octal, as memcached prints it ("": its default, 700)
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

	// memcached's gating flags.
	FlushDisabled   bool // -F: flush_all answers CLIENT_ERROR flush_all not allowed
	DumpDisabled    bool // -X: stats cachedump, stats detail and lru_crawler metadump/mgdump are refused
	WatchDisabled   bool // -W: watch is refused
	ShutdownEnabled bool // -A: shutdown stops the server (Env.Shutdown)

	// WatcherLogbufSize is -o watcher_logbuf_size in bytes (memcached takes
	// KB on the command line and prints bytes): each watcher's buffer of
	// unsent lines; lines that do not fit are dropped and counted, and the
	// next one that fits is preceded by skipped=N. 0 means memcached's
	// default, 256 KB.
	WatcherLogbufSize int

	// LRUMaintainerDisabled is -o no_lru_maintainer (or no_modern without a
	// later lru_maintainer): `stats` then leaves out the maintainer's
	// counters (lru_maintainer_juggles, evicted_active, moves_*,
	// direct_reclaims, lru_bumps_dropped), as memcached.
	LRUMaintainerDisabled bool

	// MemoryFile is -e's path, which `stats settings` prints as
	// memory_file; "" prints memcached's (null).
	MemoryFile string

	// NAPIIDs is -N as given (0 without it), which `stats settings`
	// prints as num_napi_ids.
	NAPIIDs int

	// LRUCrawlerDisabled is -o no_lru_crawler (or no_modern without a later
	// lru_crawler): the crawler starts off, so `stats settings` says
	// lru_crawler no and crawl/metadump answer "lru crawler disabled" until
	// `lru_crawler enable`.
	LRUCrawlerDisabled bool

	// GrowthFactor (-f) and ChunkSize (-n) are reported by `stats
	// settings`; the size classes follow store.Config.GrowthFactor and
	// MinChunk, which take the same values. 0 means memcached's defaults
	// (1.25 and 48).
	GrowthFactor float64
	ChunkSize    int

	// SlabChunkMax is memcached's slab_chunk_max (-o slab_chunk_max, or
	// the 1 MB slab page under no_chunked_items or no_modern), for `stats
	// settings`; the store's Config.SlabChunkMax applies it. 0 means
	// memcached's default, 512 KB.
	SlabChunkMax int

	// HashPowerInit is -o hashpower as given (0 without it), which `stats
	// settings` prints as hashpower_init; store.Config.HashPower takes the
	// same value and starts hash_power_level there.
	HashPowerInit int

	// DebugTime (--debug-time) turns on memcached-debug's `debugtime`
	// command; without it the command is unknown (ERROR), as in release
	// builds of memcached.
	DebugTime bool

	// Tuning is what -o set of memcached's internal knobs (tuning.go); nil
	// means memcached's defaults.
	Tuning *Tuning

	// TLS describes -Z's setup for `stats settings`; nil without -Z.
	TLS *TLSSettings
	// TLSOptions are the ssl_* options given without -Z, which `stats
	// settings` reports as memcached does (TLS being nil).
	TLSOptions *TLSSettings

	// DetailDelimiter is -D: the prefix delimiter of `stats detail`; setting
	// it also turns the collection on from the start, as -D does in
	// memcached. 0 means memcached's ':' with collection off.
	DetailDelimiter byte
}

// defaultSlabChunkMax is memcached's slab_chunk_max unless told otherwise:
// half its 1 MB slab page. A larger item is stored in chunks.
const defaultSlabChunkMax = 512 << 10

// slabChunkMax is SlabChunkMax, or memcached's default when unset (or no
// Settings at all).
func (s *Settings) slabChunkMax() int {
	if s == nil || s.SlabChunkMax <= 0 {
		return defaultSlabChunkMax
	}
	return s.SlabChunkMax
}

// TLSSettings are memcached's ssl_* settings as `stats settings` shows them.
type TLSSettings struct {
	ChainCert, Key, CACert string // paths; "" prints memcached's (null)/NULL
	VerifyMode             int    // ssl_verify_mode 0-3
	MinVersion             string // "tlsv1.2"
	SessionCache           bool
	Ciphers                string // "" prints NULL
	// Certs reloads the certificate (refresh_certs) and reports when it
	// was last loaded (time_since_server_cert_refresh).
	Certs CertReloader
}

// CertReloader is the server's certificate holder.
type CertReloader interface {
	Reload() error
	LoadedUnix() int64
}

// ServerStats are the connection-level totals only an engine knows.
type ServerStats struct {
	CurrConnections     uint64
	TotalConnections    uint64
	RejectedConnections uint64
	ConnStructures      uint64
	ListenDisabledNum   uint64
	ListenDisabledUs    uint64 // time_in_listen_disabled_us
	AcceptingConns      bool
	BytesRead           uint64
	BytesWritten        uint64
	ConnYields          uint64
	IdleKicks           uint64 // connections closed by -o idle_timeout
	SSLHandshakeErrors  uint64 // TLS clients whose handshake failed (-Z)
	SSLProtoErrors      uint64 // TLS reads and writes failed after the handshake (-Z)
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
	// ListenerBinding, when set, gives a TCP connection's binding from its
	// descriptor (the listener that accepted it: memcached's per-listener
	// "-l proto[ascii|binary|negotiating]:addr"), and false where -B's
	// applies. It is called once per connection, from OpenedFrom.
	ListenerBinding func(fd int) (Binding, bool)
	// SASL, when set, makes binary clients authenticate (memcached's -S with
	// a MEMCACHED_SASL_PWDB password file, sasl.go); it implies binary-only
	// connections, as -S implies -B binary in memcached.
	SASL *SASL

	// Shutdown is called by `shutdown` (graceful: `shutdown graceful`)
	// when Settings.ShutdownEnabled (-A) is set; it should start the
	// process's stop (memcached raises SIGINT, or SIGUSR1 for graceful) and
	// return at once. The connection that asked is closed without a reply.
	Shutdown func(graceful bool)

	// ASCIIAuth, when set (-Y), makes text-protocol clients authenticate
	// with `set <any key> 0 0 <n>` carrying "user password" before any other
	// command, as memcached's ASCII auth does (auth.go).
	ASCIIAuth *ASCIIAuth

	// VerboseLog receives memcached's -vv lines ("<fd get k", ">fd END",
	// "<fd new auto-negotiating client connection", ...) while
	// Settings.Verbosity is 2 or more; nil disables them. Writes come from
	// many connections at once: the writer must be safe for that (a
	// *os.File is). See verbose.go.
	VerboseLog io.Writer

	// ResumesPending is set by an engine that calls Session.Process again
	// (with whatever input it holds, possibly none) once it has sent the
	// replies, for as long as Session.Pending reports true, and that calls
	// the Session's wakeup (Session.SetWakeup) to do so when a watcher has
	// new lines. Without it, a metadump is written whole in one call, and
	// `watch` is refused with memcached's WATCHER_FAILED.
	ResumesPending bool

	// Background runs work that memcached gives a thread of its own (an
	// `lru_crawler crawl`'s sweep) so that it does not hold up the
	// connection; nil means a goroutine. Tests that compare two runs byte
	// for byte run it inline, so that what follows sees it done.
	Background func(work func())

	// counters are the totals only the protocol sees; the zero value is ready.
	counters protoCounters
	// admin is the run-time state of the admin commands (admin_state.go).
	admin adminState
	ext   extKnobs // ext_* settings without a flash tier
	// detail is the per-prefix statistics of `stats detail` (detail.go).
	detail prefixStats
	// logs feeds `watch` connections (watch.go).
	logs watchHub
	// crawlerBusy is memcached's one LRU crawler: held by a crawl until
	// it is done and by a metadump from its start until its END or its
	// connection's end (crawler.go); stats' lru_crawler_running.
	crawlerBusy atomic.Bool
	// oldestLive is memcached's oldest_live as the last flush_all set it,
	// in its relative time: `stats settings`' oldest (flush.go).
	oldestLive atomic.Int64
	// mem is the workers' connection memory pools (connmem.go).
	mem connMemory
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
