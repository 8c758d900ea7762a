package reactor

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/gocached/gocached/internal/protocol"
)

// Session is what a connection needs of protocol.Session. Engines hold it
// through this interface so tests can put a small fake behind it.
type Session interface {
	// Process handles the complete requests at the start of in, appending
	// replies to out; see protocol.Status for what to do next.
	Process(in, out []byte) (consumed int, reply []byte, st protocol.Status)
	// Want is the buffer size the unconsumed request needs to fit whole.
	Want() int
	// Reset readies the Session for a new connection.
	Reset()

	// OpenedFrom gives the Session the engine's id for its new connection
	// (the file descriptor, as memcached's -vv lines and watch's cfd= show
	// it), its transport ("tcp", or "local" for a unix socket) and peer.
	OpenedFrom(id int, transport string, peer netip.AddrPort)
	// Pending reports that the Session has output to produce without more
	// input: a value sent in chunks, requests left unstarted because the
	// output budget was spent, a metadump, a watch stream. Every engine
	// sets protocol.Env.ResumesPending and honours it (see Resume).
	Pending() bool
	// SetWakeup registers the function a watching Session calls, from any
	// goroutine, when it has new output; it must only signal the engine.
	SetWakeup(fn func())
	// Waiting reports that the Session stopped for something it started
	// (a value read from flash) and goes on only after its wakeup: an
	// engine that would otherwise block reading the socket waits for the
	// wakeup instead, since the client may be waiting for the reply.
	Waiting() bool
}

// RefSender is a Session that can leave large values to its engine to
// write straight from the store's memory, each in its place in the reply,
// instead of copying them into it (protocol.Session: SendRefs, TakeRefs,
// RefSent).
type RefSender interface {
	SendRefs()
	TakeRefs() []protocol.RefSeg
	RefSent()
}

// Config is what every engine takes. internal/server builds it once from the
// command line; engines read it and never write it back: what an engine
// chooses (its thread count, its NAPI map) it reports through Engine.
type Config struct {
	Listen   string // -l: host(s); "" = all interfaces
	Port     int    // -p: 0 picks a free port (internal/config maps memcached's -p -1 here)
	MaxConns int    // -c: across the whole engine
	Threads  int    // -t: 0 = the engine's automatic choice
	Backlog  int    // -b

	// SocketMark is memcached's -o sock_cookie_id: SO_MARK on the TCP
	// listeners (and so on their connections); 0 leaves them unmarked.
	SocketMark uint32

	// NoTCP is memcached's -p 0: no TCP listener at all; the engine serves
	// nothing unless another transport (UDP, run beside it) does.
	NoTCP bool

	// UnixSocket (-s) makes the engine listen on this AF_UNIX path instead
	// of TCP, as memcached does. UnixMask (-a) is the mode the socket file
	// gets, os.ModeSocket included as os.Stat reports it (so -a 0, mode
	// 000, is not the zero value); zero: memcached's default, 0700.
	UnixSocket string
	UnixMask   os.FileMode

	// UnixSocketOwner, when set, runs the -s socket's file work (removing a
	// stale socket, binding, setting -a's mode) with the file-system
	// identity that is to own the socket: internal/server passes the -u
	// user's, since memcached, already that user when it binds, creates the
	// socket as the user and needs no right root has (a service confined to
	// CAP_SETUID/CAP_SETGID, as Debian's memcached.service is, has neither
	// CAP_DAC_OVERRIDE to create it in the user's /run/memcached nor
	// CAP_CHOWN to hand it over). nil runs it as the process.
	UnixSocketOwner func(fn func() error) error

	// TLS (-Z) makes every listener but the "notls:" ones serve TLS with
	// this configuration. Only the portable engine serves TLS: internal/server
	// runs it when -Z is given (see doc.go).
	TLS *tls.Config

	// IdleTimeout (-o idle_timeout) closes clients that sent nothing for
	// this long, counting each in idle_kicks; 0 keeps them forever.
	IdleTimeout time.Duration

	// MoreConns, when set, adds sockets the engine does not own to its
	// `stats conns` (the UDP server's, which memcached lists there too).
	// It may be called from any goroutine, and before it has anything.
	MoreConns func(now int64) []ConnLine

	// NewSession makes the protocol handler of one connection. Engines
	// call it lazily (on the first connection, after Serve starts) and
	// reuse Sessions through Reset.
	NewSession func() Session

	// PrefetchInputs, when set, is given the new input of the connections
	// an engine is about to serve together, before it serves them: a hint
	// that lets their lookups' cache misses overlap
	// (protocol.Env.PrefetchInputs). It must not keep the slices.
	PrefetchInputs func(ins [][]byte)

	Epoll EpollConfig // read by the raw-descriptor engines (epoll, uring)
}

// EpollConfig holds the reactor settings of the raw-descriptor engines.
// Named for epoll, which reads them all; uring reads the busy-poll knobs
// (as its ring's NAPI registration), PinCPUs and TimeoutMs.
type EpollConfig struct {
	BusyPollUsecs  uint32
	BusyPollBudget uint16
	PreferBusyPoll bool
	MaxEvents      int   // epoll_wait batch; 0 = 64
	TimeoutMs      int   // epoll_wait timeout; -1 (or 0, the zero value) blocks
	PinCPUs        []int // reactor i pinned to PinCPUs[i % len]

	// PollMode is the --poll-mode in effect, for `stats reactors`
	// (reactor:N:poll_mode): a preset name such as "suspend20", "custom"
	// when only explicit knob flags were given, "base" when the requested
	// mode found no NAPI to act on, and "" when gocached leaves the kernel
	// knobs alone. The preset's epoll parameters are already folded into
	// the fields above.
	PollMode string
	// NAPIKnobs reads the current knobs of NAPI napiID back from the
	// kernel (netdev napi-get) for `stats reactors`; timeouts in ns. It is
	// safe for concurrent use and costs a netlink round trip, so it is
	// called at stats time only. nil leaves those lines out; an error means
	// "unknown right now". internal/server supplies it from internal/napi, so
	// the engines never import napi.
	NAPIKnobs func(napiID uint32) (deferHardIRQs uint32, groFlushTimeoutNs, irqSuspendTimeoutNs uint64, err error)
}

// Engine is a running server. It is also the protocol.Server that `stats`
// asks for connection-level numbers and the groups the engine owns.
type Engine interface {
	protocol.Server
	// Addr is the first bound listening address (useful with -p 0).
	Addr() net.Addr
	// Threads is the number of threads serving requests: reactors, or
	// GOMAXPROCS for the portable engine. It is fixed once New returns.
	Threads() int
	// Serve runs until Shutdown; it returns nil after a clean shutdown.
	Serve() error
	// Shutdown stops accepting, lets in-flight replies finish and closes
	// the connections; when ctx ends first it closes them at once and
	// returns ctx's error.
	Shutdown(ctx context.Context) error
}

// Factory builds an engine, bound and listening, ready for Serve.
type Factory func(Config) (Engine, error)
