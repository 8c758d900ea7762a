package config

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/gocached/gocached/internal/cpuset"
	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// Options is the parsed command line.
type Options struct {
	Engine        string
	Reactor       reactor.Config
	UnixMaskText  string // -a as given, in octal, for stats settings
	ReqsPerEvent  int    // -R: enforced by the protocol Sessions
	Memory        int64  // -m in bytes
	ItemSize      int    // -I in bytes
	NoEvict       bool
	NoCAS         bool
	UDPPort       int
	Verbosity     int
	Protocol      string // -B as given
	Binding       protocol.Binding
	SASL          bool   // -S: binary clients authenticate (Cyrus SASL setup, or $MEMCACHED_SASL_PWDB)
	Gates         Gates  // -A -F -X -W -Y -f -n -D
	LargePages    bool   // -L
	MemoryFile    string // -e: item memory in this file, restartable after SIGUSR1
	TLS           TLS    // -Z and -o ssl_*
	NAPIIDs       int    // -N: accepted for memcached compatibility
	NAPI          NAPI
	Proc          Process      // -u -P -d -k -r
	ext           []extSetting // -o as given, in order, for the checks and the log
	Ext           Extended     // -o decoded
	CPUProfile    string       // --cpuprofile: write a pprof CPU profile here while serving
	DebugTime     bool         // --debug-time: accept memcached-debug's debugtime command
	MetricsListen string       // --metrics-listen: serve Prometheus metrics here (off when empty)

	Help, Version bool
	Warnings      []string        // memcached's warnings while reading the flags, for stderr
	Usage         string          // the flag table, for -h
	Flags         *pflag.FlagSet  // every flag, for the man page
	Changed       map[string]bool // long names of the flags given
}

// Parse parses memcached's flags (short and long names) plus gocached's
// engine flags. Every value is checked here, so that a bad one exits (with
// memcached's status, see cliexit.go) before anything starts.
func Parse(args []string) (*Options, error) {
	fs := pflag.NewFlagSet("gocached", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.SortFlags = false
	// Long names are spelled with dashes only: memcached's -h prints
	// --napi_ids, but its getopt_long knows --napi-ids and refuses the
	// underscore spelling as an unrecognized option, and so does gocached.

	o := &Options{}
	rc := &o.Reactor
	var memory, itemSize, threads, pinCPUs string
	var busyPollBudget uint16

	fs.IntVarP(&rc.Port, "port", "p", 11211, "TCP port to listen on (0 = off, as memcached; -1: a free port the kernel picks)")
	fs.IntVarP(&o.UDPPort, "udp-port", "U", 0, "UDP port to listen on (0 = off, the default since memcached 1.5.6; -1: a free port)")
	fs.StringVarP(&rc.Listen, "listen", "l", "", "interface(s) to listen on, comma-separated; host or host:port (default: all)")
	fs.StringVarP(&rc.UnixSocket, "unix-socket", "s", "", "UNIX socket to listen on (disables network support)")
	var unixMask string
	fs.StringVarP(&unixMask, "unix-mask", "a", "700", "access mask for the UNIX socket, in octal")
	fs.StringVarP(&memory, "memory-limit", "m", "64", "item memory in megabytes (suffix m or g accepted)")
	conns := newCInt(&rc.MaxConns, 1024)
	fs.VarP(conns, "conn-limit", "c", "max simultaneous connections")
	fs.StringVarP(&threads, "threads", "t", "auto", "reactors for the epoll and uring engines (GOMAXPROCS for the go engine): a number, or auto (one per NAPI of the listen interface)")
	fs.StringVarP(&itemSize, "max-item-size", "I", "1m", "max item size (suffix k or m; min 1k, max 1024m, at most half of -m)")
	fs.BoolVarP(&o.NoEvict, "disable-evictions", "M", false, "return an error when memory is full instead of evicting")
	fs.BoolVarP(&o.NoCAS, "disable-cas", "C", false, "disable use of CAS")
	fs.CountVarP(&o.Verbosity, "verbose", "v", "verbose logging (-v info, -vv debug)")
	reqs := newCInt(&o.ReqsPerEvent, 20)
	fs.VarP(reqs, "max-reqs-per-event", "R", "max requests handled per connection per event, for fairness")
	fs.StringVarP(&o.Protocol, "protocol", "B", "auto", "protocol: ascii, binary, or auto (by the first byte a client sends)")
	fs.BoolVarP(&o.SASL, "enable-sasl", "S", false, "binary clients must authenticate: Cyrus SASL's memcached.conf and sasldb2 (SCRAM-SHA-*, CRAM-MD5, PLAIN, LOGIN), or the user:password file named by $MEMCACHED_SASL_PWDB; implies -B binary")
	fs.IntVarP(&rc.Backlog, "listen-backlog", "b", 1024, "listen backlog")
	napiIDs := newCInt(&o.NAPIIDs, 0)
	fs.VarP(napiIDs, "napi-ids", "N", "memcached's NAPI ID count; accepted for compatibility (the epoll engine routes by NAPI ID on its own)")
	fs.StringVarP(&o.Proc.User, "user", "u", "", "assume identity of <username> after setup (only when run as root)")
	fs.StringVarP(&o.Proc.PidFile, "pidfile", "P", "", "save PID in <file>")
	fs.BoolVarP(&o.Proc.Daemon, "daemon", "d", false, "run as a daemon (the command returns once the server listens)")
	fs.BoolVarP(&o.Proc.LockMem, "lock-memory", "k", false, "lock down all paged memory (mlockall)")
	fs.BoolVarP(&o.Proc.CoreDumps, "enable-coredumps", "r", false, "maximize core file limit")
	var extRaw []string
	fs.StringArrayVarP(&extRaw, "extended", "o", nil, "comma separated list of extended options (memcached's; each is logged with its effect here), e.g. ext_path=FILE:SIZE for a flash tier")
	fs.BoolVarP(&o.Gates.Shutdown, "enable-shutdown", "A", false, `enable the ascii "shutdown" command`)
	fs.BoolVarP(&o.Gates.NoFlush, "disable-flush-all", "F", false, "disable the flush_all command")
	fs.BoolVarP(&o.Gates.NoDump, "disable-dumping", "X", false, "disable stats cachedump and lru_crawler metadump")
	fs.BoolVarP(&o.Gates.NoWatch, "disable-watch", "W", false, "disable watch commands (live logging)")
	fs.StringVarP(&o.Gates.AuthFile, "auth-file", "Y", "", "enable ASCII protocol authentication against this file of user:pass lines")
	factor := newCFloat(&o.Gates.Factor, 1.25)
	fs.VarP(factor, "slab-growth-factor", "f", "chunk size growth factor of the size classes")
	minChunk := newCInt(&o.Gates.MinChunk, 48)
	fs.VarP(minChunk, "slab-min-size", "n", "min space used for key+value+flags")
	var delim string
	fs.StringVarP(&delim, "delimiter", "D", "", "use <char> as the delimiter between key prefixes and IDs in stats detail (turns it on)")
	fs.BoolVarP(&o.LargePages, "enable-largepages", "L", false, "map item memory up front with huge pages (the limit then cannot change at run time)")
	fs.StringVarP(&o.MemoryFile, "memory-file", "e", "", "keep item memory in this file (best on a RAM disk such as /dev/shm); a stop by SIGUSR1 saves the cache and the next start with the same file and settings serves it")
	fs.BoolVarP(&o.TLS.Enabled, "enable-ssl", "Z", false, "enable TLS (-o ssl_chain_cert=,ssl_key=,...); TLS clients are served by the portable engine")
	fs.BoolVarP(&o.Version, "version", "V", false, "print version and exit")
	fs.BoolVarP(&o.Help, "help", "h", false, "print this help and exit")

	fs.StringVar(&o.Engine, "engine", DefaultEngine(), "network engine: epoll (Linux), uring (Linux io_uring with NAPI busy polling) or go (portable)")
	fs.Uint32Var(&rc.Epoll.BusyPollUsecs, "busy-poll-usecs", 0, "epoll busy-poll time per wait in µs (EPIOCSPARAMS; 0 = off)")
	fs.Uint16Var(&busyPollBudget, "busy-poll-budget", 64, "packets per busy-poll round (above 64 needs CAP_NET_ADMIN)")
	fs.BoolVar(&rc.Epoll.PreferBusyPoll, "prefer-busy-poll", false, "prefer busy polling over interrupts (needed for IRQ suspension)")
	fs.IntVar(&rc.Epoll.MaxEvents, "max-events", 64, "epoll_wait batch size")
	fs.IntVar(&rc.Epoll.TimeoutMs, "epoll-timeout", -1, "epoll_wait timeout in ms (-1 blocks)")
	fs.StringVar(&pinCPUs, "pin-cpus", "", "pin reactor i to the i-th CPU of this list (e.g. 0,2,4-7)")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "", "serve Prometheus metrics (/metrics, /healthz) on this host:port; off unless given")
	fs.BoolVar(&o.DebugTime, "debug-time", false, "accept memcached-debug's `debugtime N|p|r` command, which moves or pauses the cache's clock (for test suites only: any client may then expire every item)")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a Go CPU profile (pprof) of the whole serving time to this file")
	nf := addNAPIFlags(fs, &o.NAPI)

	// memcached's getopt loop: each option checked as it is read, in
	// command-line order; an abbreviation getopt_long refuses is refused
	// where it stands, after the options before it.
	args, expandErr := expandLongOptions(fs, args)
	mf := memcachedFlags{conns: conns, reqs: reqs, NAPIIDs: napiIDs, MinChunk: minChunk, Factor: factor}
	loop := &getoptLoop{o: o, fs: fs, mf: mf}
	o.Memory, _ = parseMemoryLimit(memory)
	o.ItemSize, _ = parseItemSize(itemSize)
	o.Binding, _ = protocol.ParseBinding(o.Protocol)
	err := loop.parse(args)
	if err == nil {
		err = expandErr
	}
	o.Usage = flagUsages(fs)
	o.Flags = fs
	o.Changed = make(map[string]bool)
	fs.Visit(func(f *pflag.Flag) { o.Changed[f.Name] = true })
	o.Warnings = loop.Warnings
	switch {
	case errors.Is(err, errStopLoop):
		return o, nil // -h or -V
	case err != nil:
		return nil, withWarnings(err, loop.Warnings)
	}
	loop.Warnings = append(loop.Warnings, slabChunkMaxWarnings(o.ext, o.ItemSize)...)
	o.Warnings = loop.Warnings
	rc.Epoll.BusyPollBudget = busyPollBudget
	// memcached keeps -a whole for `stats settings` and gives the socket
	// its permission bits (umask(~(mask & 0777))): 1777 is mode 777.
	mask, err := strconv.ParseUint(unixMask, 8, 32)
	if err != nil || mask > 0o7777 {
		loop.note(refusef("invalid -a %q: want an octal access mask such as 700", unixMask))
	}
	rc.UnixMask = os.ModeSocket | os.FileMode(mask)&os.ModePerm
	o.UnixMaskText = strconv.FormatUint(mask, 8)
	if fs.Changed("udp-port") && o.UDPPort != 0 && !fs.Changed("port") {
		rc.Port = o.UDPPort // as memcached: -U alone sets the TCP port too
	}
	if err := o.checkAfterLoop(fs); err != nil {
		return nil, withWarnings(err, loop.Warnings)
	}
	if loop.refusal != nil {
		return nil, withWarnings(loop.refusal, loop.Warnings)
	}
	if err := o.TLS.fromExt(o.ext); err != nil {
		return nil, err
	}
	if rc.Epoll.PinCPUs, err = cpuset.Parse(pinCPUs); err != nil {
		return nil, usagef("invalid --pin-cpus %q: %v", pinCPUs, err)
	}
	if o.TLS.Enabled && o.Engine != "go" {
		if fs.Changed("engine") {
			return nil, usagef("-Z: TLS is served by --engine=go, not --engine=%s", o.Engine)
		}
		o.Engine = "go"
	}
	if idle := extInt(o.ext, "idle_timeout", 0); idle > 0 {
		rc.IdleTimeout = time.Duration(idle) * time.Second
	}
	if err := nf.resolve(fs, o); err != nil {
		return nil, err
	}
	if err := o.checkOwn(); err != nil {
		return nil, err
	}
	switch rc.Port {
	case 0:
		rc.NoTCP = true // memcached's -p 0 turns TCP off
	case -1:
		rc.Port = 0 // memcached's ephemeral TCP port: the kernel's port 0
	}
	o.Ext = decodeExtended(o.ext, o.ItemSize)
	rc.SocketMark = extSocketMark(o.ext) // the TCP listeners' and UDP's
	return o, nil
}

// checkOwn validates gocached's own flags: EX_USAGE, gocached's wording.
func (o *Options) checkOwn() error {
	e := &o.Reactor.Epoll
	switch {
	case e.MaxEvents <= 0:
		return usagef("--max-events must be greater than 0 (got %d)", e.MaxEvents)
	case e.TimeoutMs < -1:
		return usagef("--epoll-timeout must be -1 (block) or a timeout in ms (got %d)", e.TimeoutMs)
	}
	if !slices.Contains(Engines, o.Engine) {
		return usagef("unknown --engine %q (want epoll, uring or go)", o.Engine)
	}
	return nil
}

// Engines are the network engines --engine chooses from; the server maps
// each name to its implementation.
var Engines = []string{"epoll", "go", "uring"}

// DefaultEngine is the engine without --engine: epoll on Linux, else the
// portable one.
func DefaultEngine() string {
	if runtime.GOOS == "linux" {
		return "epoll"
	}
	return "go"
}

func lastByte(s string) string {
	if s == "" {
		return ""
	}
	return s[len(s)-1:]
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
