package main

import (
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
// -a 9, -b 0, -R -1, -n -1, -m -5, a stray operand), since it would start
// with something else than was asked.

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
	conns, reqs, napiIDs, minChunk *cInt
	factor                         *cFloat
}

// checkLoop makes the checks memcached makes while it reads each flag:
// status 1, except -B's (EX_USAGE in memcached too).
func (o *options) checkLoop(fs *pflag.FlagSet, mf memcachedFlags, memory, itemSize, threads, delim string) error {
	var err error
	if o.memory, err = parseMemoryLimit(memory); err != nil {
		return err
	}
	if o.itemSize, err = parseItemSize(itemSize); err != nil {
		return err
	}
	if err := mf.conns.check("-c", o.reactor.MaxConns <= 0, "Maximum connections must be greater than 0"); err != nil {
		return err
	}
	if o.reactor.Threads, err = parseThreads(threads); err != nil {
		return err
	}
	if err := mf.reqs.check("-R", o.reqsPerEvent == 0, "Number of requests per event must be greater than 0"); err != nil {
		return err
	}
	if o.reqsPerEvent < 0 {
		return refusef("invalid -R %d: want a number of requests greater than 0", o.reqsPerEvent)
	}
	if o.gates.factor <= 1 {
		return mcFail("Factor must be greater than 1")
	}
	if mf.factor.raw != "" {
		return refusef("invalid value %q for -f: want a number", mf.factor.raw)
	}
	if err := mf.minChunk.check("-n", o.gates.minChunk == 0, "Chunk size must be greater than 0"); err != nil {
		return err
	}
	if o.gates.minChunk < 0 {
		return refusef("invalid -n %d: want a chunk size greater than 0", o.gates.minChunk)
	}
	if err := o.gates.setDelimiter(delim, fs.Changed("delimiter")); err != nil {
		return err
	}
	if fs.Changed("napi-ids") {
		if err := mf.napiIDs.check("-N", o.napiIDs <= 0, "Maximum number of NAPI IDs must be greater than 0"); err != nil {
			return err
		}
	}
	b, err := protocol.ParseBinding(o.protocol)
	if err != nil || o.protocol == "auto-negotiate" {
		return mcUsage("Invalid value for binding protocol: %s\n -- should be one of auto, binary, or ascii", o.protocol)
	}
	o.binding = b
	rc := &o.reactor
	switch {
	case rc.Port < -1: // memcached fails to listen (EX_OSERR)
		return refusef("invalid port number %d", rc.Port)
	case o.udpPort < -1:
		return refusef("invalid UDP port number %d", o.udpPort)
	case rc.Backlog <= 0:
		return refusef("listen backlog must be greater than 0 (-b %d)", rc.Backlog)
	}
	return nil
}

// checkAfterLoop makes memcached's checks after its getopt loop, in its
// order: EX_USAGE. The TCP port is the one -U may have set.
func (o *options) checkAfterLoop(fs *pflag.FlagSet) error {
	threads := o.reactor.Threads
	if threads == 0 {
		threads = memcachedDefaultThreads
	}
	if o.napiIDs > threads {
		return mcUsage("Number of napi_ids(%d) cannot be greater than number of threads(%d)", o.napiIDs, threads)
	}
	switch item := o.itemSize; {
	case item < minItemSize:
		return mcUsage("Item max size cannot be less than 1024 bytes.")
	case int64(item) > o.memory/2:
		return mcUsage("Cannot set item size limit higher than 1/2 of memory max.")
	case item > maxItemSize:
		return mcUsage("Cannot set item size limit higher than a gigabyte.")
	}
	if err := checkSlabChunkMax(o.ext, o.itemSize); err != nil {
		return err
	}
	if err := checkExtAfterLoop(o.ext, o.itemSize, o.udpPort, o.gates.minChunk); err != nil {
		return err
	}
	given := fs.Changed("protocol")
	if o.sasl {
		if given && o.binding != protocol.BindingBinary {
			return mcUsage("ERROR: You cannot allow the ASCII protocol while using SASL.")
		}
		if o.udpPort != 0 {
			return mcUsage("ERROR: Cannot enable UDP while using binary SASL authentication.")
		}
	}
	if o.gates.authFile != "" && given && o.binding != protocol.BindingASCII {
		return mcUsage("ERROR: You cannot allow the BINARY protocol while using ascii authentication tokens.")
	}
	if o.reactor.Port > 65535 {
		return mcUsage("ERROR: Invalid port number %d.", o.reactor.Port)
	}
	if o.udpPort > 65535 { // -U alone: memcached's port check above
		return refusef("invalid UDP port number %d", o.udpPort)
	}
	if o.tls.enabled && o.reactor.Port == 0 {
		return mcUsage("ERROR: You cannot enable SSL without a TCP port.")
	}
	if o.gates.authFile != "" && o.udpPort != 0 {
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
		return 0, refusef("invalid memory limit -m %q: want a positive number of megabytes", s)
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
		if v := int64(cAtoi(num)) * mult; v < minItemSize {
			return int(v), nil
		}
		return 0, refusef("invalid max item size -I %q: want bytes, or a number with suffix k or m", s)
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
		return 0, refusef("invalid value %q for -t: want a number of threads, or auto", s)
	}
	return n, nil
}
