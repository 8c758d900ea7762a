package config

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gocached/gocached/internal/protocol"
)

// memcached's checks of its own flags, with its messages and statuses
// (memcached.c, main(): the getopt loop and the checks after it).
// memcached reads most numbers with atoi and so takes garbage; gocached
// takes memcached's reading where memcached's own check then refuses it
// (-c abc is 0: "Maximum connections must be greater than 0"), and refuses
// with status 1 the garbage memcached would start with (-c 12abc, -p abc,
// -a 9, -b 0, -m -5, a stray operand), since it would start with
// something else than was asked.

// memcachedDefaultThreads is memcached's -t default, which its -N check
// compares with when -t is not a number (gocached's -t auto).
const memcachedDefaultThreads = 4

// Limits memcached enforces on -I.
const (
	minItemSize = 1 << 10
	maxItemSize = 1 << 30
)

// memcachedFlags are the flags read as memcached reads them (cInt, cFloat).
type memcachedFlags struct {
	conns, reqs, NAPIIDs, MinChunk *cInt
	Factor                         *cFloat
}

// getoptLoop is memcached's getopt loop: pflag calls set for each option
// in command-line order, each occurrence with its own value, and set makes
// the check memcached makes on reading it, so the first bad option on the
// command line is the one refused (-c 0 -c 5 is refused, as memcached
// does). gocached's own refusals of garbage memcached takes (refusef) wait
// in refusal until memcached's checks, in and after the loop, have passed:
// a command line memcached refuses is refused with memcached's message.
type getoptLoop struct {
	o        *Options
	fs       *pflag.FlagSet
	mf       memcachedFlags
	refusal  error    // gocached's first refusal, reported after memcached's checks
	Warnings []string // what memcached prints while reading and goes on (-t 100)
}

// errStopLoop ends the loop at -h or -V, which memcached obeys at once.
var errStopLoop = errors.New("stop")

// note keeps gocached's refusals for later and passes memcached's on.
func (l *getoptLoop) note(err error) error {
	var ue *UsageError
	if err != nil && errors.As(err, &ue) && !ue.memcached && ue.Status == exitFailure {
		if l.refusal == nil {
			l.refusal = err
		}
		return nil
	}
	return err
}

// set reads one option as memcached's loop does.
func (l *getoptLoop) set(f *pflag.Flag, value string) error {
	o := l.o
	// memcached 1.6.32 and later skip the blanks an argument starts with,
	// which a quoted "-l 127.0.0.1" in a service file or a wrapper leaves
	// in front of the value.
	value = strings.TrimLeft(value, cBlanks)
	if err := l.fs.Set(f.Name, value); err != nil {
		return l.note(getoptError(err, nil))
	}
	var err error
	switch f.Name {
	case "help", "version":
		return errStopLoop
	case "memory-limit":
		o.Memory, err = parseMemoryLimit(value)
	case "max-item-size":
		o.ItemSize, err = parseItemSize(value)
	case "conn-limit":
		err = l.mf.conns.check("-c", o.Reactor.MaxConns <= 0, "Maximum connections must be greater than 0")
	case "threads":
		o.Reactor.Threads, err = parseThreads(value)
		if err = l.note(err); err != nil {
			return err
		}
		if o.Reactor.Threads > 64 { // memcached's warning, word for word
			l.Warnings = append(l.Warnings, "WARNING: Setting a high number of workerthreads is not recommended.\n"+
				" Set this value to the number of cores in your machine or less.")
		}
	case "max-reqs-per-event":
		// memcached 1.6.24 and later refuse a negative count too.
		err = l.mf.reqs.check("-R", o.ReqsPerEvent <= 0, "Number of requests per event must be greater than 0")
	case "slab-growth-factor":
		if o.Gates.Factor <= 1 {
			return mcFail("Factor must be greater than 1")
		}
		if l.mf.Factor.raw != "" {
			err = refusef("invalid value %q for -f: want a number", l.mf.Factor.raw)
		}
	case "slab-min-size":
		err = l.mf.MinChunk.check("-n", o.Gates.MinChunk <= 0, "Chunk size must be greater than 0")
	case "delimiter":
		err = o.Gates.setDelimiter(value, true)
	case "napi-ids":
		err = l.mf.NAPIIDs.check("-N", o.NAPIIDs <= 0, "Maximum number of NAPI IDs must be greater than 0")
	case "protocol":
		b, perr := protocol.ParseBinding(value)
		if perr != nil || value == "auto-negotiate" {
			return mcUsage("Invalid value for binding protocol: %s\n -- should be one of auto, binary, or ascii", value)
		}
		o.Binding = b
	case "extended":
		o.ext, err = appendExtOptions(o.ext, value, l.note)
	}
	return l.note(err)
}

// parse runs the loop over args (expanded by expandLongOptions) and makes
// the checks memcached makes on the values it keeps (gocached's refusals
// of ports and the backlog).
func (l *getoptLoop) parse(args []string) error {
	if err := l.fs.ParseAll(args, l.set); err != nil {
		var ue *UsageError
		if errors.Is(err, errStopLoop) || errors.As(err, &ue) {
			return err
		}
		return getoptError(err, args)
	}
	if l.fs.NArg() > 0 {
		// memcached's getopt leaves operands alone and starts; here one is
		// most likely a flag that lost its dash, so it is refused.
		l.note(refusef("unexpected argument %q", l.fs.Arg(0)))
	}
	rc := &l.o.Reactor
	switch {
	case rc.Port < -1: // memcached fails to listen (EX_OSERR)
		l.note(refusef("invalid port number %d", rc.Port))
	case l.o.UDPPort < -1:
		l.note(refusef("invalid UDP port number %d", l.o.UDPPort))
	case rc.Backlog <= 0:
		l.note(refusef("listen backlog must be greater than 0 (-b %d)", rc.Backlog))
	}
	return nil
}

// MemcachedThreads is memcached's -t for its checks: as given, else its
// default, whatever number of reactors gocached's own -t auto picks.
func (o *Options) MemcachedThreads() int {
	if o.Reactor.Threads == 0 {
		return memcachedDefaultThreads
	}
	return o.Reactor.Threads
}

// checkAfterLoop makes memcached's checks after its getopt loop, in its
// order: EX_USAGE. The TCP port is the one -U may have set.
func (o *Options) checkAfterLoop(fs *pflag.FlagSet) error {
	threads := o.MemcachedThreads()
	if o.NAPIIDs > threads {
		return mcUsage("Number of napi_ids(%d) cannot be greater than number of threads(%d)", o.NAPIIDs, threads)
	}
	switch item := o.ItemSize; {
	case item < minItemSize:
		return mcUsage("Item max size cannot be less than 1024 bytes.")
	case int64(item) > o.Memory/2:
		return mcUsage("Cannot set item size limit higher than 1/2 of memory max.")
	case item > maxItemSize:
		return mcUsage("Cannot set item size limit higher than a gigabyte.")
	}
	if err := checkSlabChunkMax(o.ext, o.ItemSize); err != nil {
		return err
	}
	if err := checkExtAfterLoop(o.ext, o.ItemSize, o.UDPPort, o.Gates.MinChunk); err != nil {
		return err
	}
	given := fs.Changed("protocol")
	if o.SASL {
		if given && o.Binding != protocol.BindingBinary {
			return mcUsage("ERROR: You cannot allow the ASCII protocol while using SASL.")
		}
		if o.UDPPort != 0 {
			return mcUsage("ERROR: Cannot enable UDP while using binary SASL authentication.")
		}
	}
	if o.Gates.AuthFile != "" && given && o.Binding != protocol.BindingASCII {
		return mcUsage("ERROR: You cannot allow the BINARY protocol while using ascii authentication tokens.")
	}
	if o.Reactor.Port > 65535 {
		return mcUsage("ERROR: Invalid port number %d.", o.Reactor.Port)
	}
	if o.UDPPort > 65535 { // -U alone: memcached's port check above
		return refusef("invalid UDP port number %d", o.UDPPort)
	}
	if o.TLS.Enabled && o.Reactor.Port == 0 {
		return mcUsage("ERROR: You cannot enable SSL without a TCP port.")
	}
	if o.Gates.AuthFile != "" && o.UDPPort != 0 {
		return mcUsage("Cannot use UDP with ascii authentication enabled (-U 0 to disable)")
	}
	return nil
}

// parseMemoryLimit reads -m: megabytes, optionally suffixed m/M (the same)
// or g/G (gigabytes; memcached's atoi would read 2g as 2 MB). A value
// memcached reads as 0 (0, abc) is 0 here too, which the -I check then
// refuses with memcached's message.
func parseMemoryLimit(s string) (int64, error) {
	num, mult := s, int64(1<<20)
	switch strings.ToLower(lastByte(s)) {
	case "m":
		num = s[:len(s)-1]
	case "g":
		num, mult = s[:len(s)-1], 1<<30
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil && cAtoi(s) == 0, err == nil && n == 0:
		return 0, nil
	case err != nil || n < 0 || n > (1<<62)/mult:
		// memcached's reading, for its checks after the loop: atoi's
		// megabytes, a negative count wrapping to a huge size_t.
		read := int64(cAtoi(s))
		if read < 0 || read > 1<<42 {
			read = 1 << 42
		}
		return read << 20, refusef("invalid memory limit -m %q: want a positive number of megabytes", s)
	}
	return n * mult, nil
}

// parseItemSize reads -I as memcached does: bytes, or with a k/K or m/M
// suffix. The limits are checked after the loop, as memcached does; a
// value memcached reads below 1 KB (abc, 2g) is returned for that check
// to refuse with memcached's message.
func parseItemSize(s string) (int, error) {
	num, mult := s, int64(1)
	switch strings.ToLower(lastByte(s)) {
	case "k":
		num, mult = s[:len(s)-1], 1<<10
	case "m":
		num, mult = s[:len(s)-1], 1<<20
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		v := int64(cAtoi(num)) * mult
		if v < minItemSize {
			return int(v), nil
		}
		if v > 4*maxItemSize {
			v = 4 * maxItemSize
		}
		// memcached's reading, for its checks after the loop.
		return int(v), refusef("invalid max item size -I %q: want bytes, or a number with suffix k or m", s)
	}
	if n > 4*maxItemSize/mult {
		n = 4 * maxItemSize / mult // far above the limit, without overflow
	}
	return int(n * mult), nil
}

// parseThreads reads -t: "auto" (0, gocached's) or a positive count.
func parseThreads(s string) (int, error) {
	if s == "auto" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		n = cAtoi(s)
	}
	if n <= 0 {
		return 0, mcFail("Number of threads must be greater than 0")
	}
	if err != nil {
		return n, refusef("invalid value %q for -t: want a number of threads, or auto", s)
	}
	return n, nil
}
