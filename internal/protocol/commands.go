package protocol

import (
	"bytes"
	"math"
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// rBadGetKey is a get's refusal of a bad key: memcached 1.6.40 on copies
// the error line, its end included, and ends the copy again
// (process_get_command_err), so a blank line follows it.
const rBadGetKey = rBadFormat + "\r\n"

// rFlashGetOOM answers a get whose flash read found no memory: memcached
// sets the error as the key's reply, then repeats that reply's line with
// its CRLF in the command's error (the same extra blank line).
const rFlashGetOOM = rGetOOM + "\r\n"

// Replies, each with its line end.
const (
	rError           = "ERROR\r\n"
	rBadFormat       = "CLIENT_ERROR bad command line format\r\n"
	rBadChunk        = "CLIENT_ERROR bad data chunk\r\n"
	rBadExptime      = "CLIENT_ERROR invalid exptime argument\r\n"
	rBadDelta        = "CLIENT_ERROR invalid numeric delta argument\r\n"
	rNonNumeric      = "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
	rTooLarge        = "SERVER_ERROR object too large for cache\r\n"
	rNoMemoryStore   = "SERVER_ERROR out of memory storing object\r\n"
	rNoMemory        = "SERVER_ERROR out of memory\r\n"
	rGetOOM          = "SERVER_ERROR out of memory writing get response\r\n"
	rShutdownOff     = "SERVER_ERROR: shutdown not enabled\r\n" // 1.6.40 on
	rStored          = "STORED\r\n"
	rNotStored       = "NOT_STORED\r\n"
	rExists          = "EXISTS\r\n"
	rNotFound        = "NOT_FOUND\r\n"
	rDeleted         = "DELETED\r\n"
	rTouched         = "TOUCHED\r\n"
	rOK              = "OK\r\n"
	rEnd             = "END\r\n"
	rReset           = "RESET\r\n"
	maxVerbosity     = 2 // memcached's MAX_VERBOSITY_LEVEL
	crlf             = "\r\n"
	valuePrefix      = "VALUE "
	storageMinTokens = 5
	// minCommandLen is the shortest line memcached's parser reads, its
	// terminator included.
	minCommandLen = 4
	// maxRelativeExptime is memcached's REALTIME_MAXDELTA: larger times are absolute.
	maxRelativeExptime = 60 * 60 * 24 * 30
	// processStartedSlack is how far before its start memcached sets
	// process_started (ITEM_UPDATE_INTERVAL + 2).
	processStartedSlack = 62
)

// execute runs one command line. rest is the input after the line. It returns
// how many bytes of rest it consumed (a data block), or minus the number it
// needs when the data block has not fully arrived (then nothing was done).
func (s *Session) execute(line, rest []byte) (int, Status) {
	s.text.noreply = false
	n := s.text.tokenize(line)
	if n == 0 || s.text.tokens[0].end-s.text.tokens[0].start < 2 {
		s.reply(rError)
		return 0, NeedMore
	}
	cmd := s.text.token(line, 0)
	if line[0] == ' ' && parsedCommand(cmd) {
		// memcached's parser finds these commands only at the very start
		// of the line; the rest it looks up by their first token.
		return s.unknownCommand(line, n)
	}
	if len(cmd) == 2 && cmd[0] == 'm' {
		return s.metaCommand(line, rest, n)
	}
	if !parsedCommand(cmd) {
		// memcached 1.6.40 on: the last token of any other line decides
		// noreply, an unknown command's ERROR included.
		s.text.setNoreply(line, n)
	}
	switch string(cmd) {
	case "get": // bget went with memcached 1.6.40's parser
		return s.retrieve(line, n, false, false)
	case "gets":
		return s.retrieve(line, n, true, false)
	case "gat":
		return s.retrieve(line, n, false, true)
	case "gats":
		return s.retrieve(line, n, true, true)
	case "set":
		return s.storage(line, rest, n, store.ModeSet)
	case "add":
		return s.storage(line, rest, n, store.ModeAdd)
	case "replace":
		return s.storage(line, rest, n, store.ModeReplace)
	case "append":
		return s.storage(line, rest, n, store.ModeAppend)
	case "prepend":
		return s.storage(line, rest, n, store.ModePrepend)
	case "cas":
		return s.storage(line, rest, n, store.ModeCAS)
	case "incr":
		s.arithmetic(line, n, false)
	case "decr":
		s.arithmetic(line, n, true)
	case "delete":
		s.delete(line, n)
	case "touch":
		s.touch(line, n)
	case "stats":
		s.stats(line, n)
	case "flush_all":
		s.flushAll(line, n)
	case "version":
		s.out = append(s.out, "VERSION "...)
		s.out = append(s.out, s.env.version()...)
		s.out = append(s.out, crlf...)
		if s.log.verbose {
			s.vlogLine('>', []byte("VERSION "+s.env.version()))
		}
	case "verbosity":
		s.verbosity(line, n)
	case "refresh_certs":
		s.refreshCerts()
	case "quit":
		s.conn.quit = true // watch connevents: reason=normal
		return 0, Close
	case "shutdown":
		return 0, s.shutdown(line, n)
	case "lru_crawler":
		s.lruCrawler(line, n)
		if s.conn.dropDatagram {
			return 0, Close
		}
	case "slabs":
		s.slabs(line, n)
	case "lru":
		s.lru(line, n)
	case "cache_memlimit":
		s.cacheMemlimit(line, n)
	case "watch":
		s.watchCommand(line, n)
		if s.conn.dropDatagram {
			return 0, Close
		}
	case "extstore":
		s.extstore(line, n)
	case "debugtime":
		if st := s.env.Settings; st == nil || !st.DebugTime {
			s.reply(rError)
			break
		}
		s.debugTime(line, n)
	case "debugitem":
		if st := s.env.Settings; st == nil || !st.DebugTime {
			s.reply(rError)
			break
		}
		s.debugItem(line, n)
	default:
		return s.unknownCommand(line, n)
	}
	return 0, NeedMore
}

// unknownCommand answers a line whose command memcached does not know:
// ERROR, or a close for what looks like an HTTP request (more than one
// token, the last starting with "HTTP/"), whatever the command's letters.
func (s *Session) unknownCommand(line []byte, n int) (int, Status) {
	if n > 1 && bytes.HasPrefix(s.text.token(line, min(n, maxTokens-1)-1), []byte("HTTP/")) {
		return 0, Close
	}
	s.reply(rError)
	return 0, NeedMore
}

// parsedCommand reports whether cmd is one of the commands memcached's
// parser (1.6.45) recognises by the line's leading bytes rather than by
// its first token: the meta commands and the key-value ones.
func parsedCommand(cmd []byte) bool {
	switch string(cmd) {
	case "mg", "ms", "md", "mn", "ma", "me", "get", "gets", "gat", "gats",
		"set", "add", "cas", "replace", "append", "prepend", "incr", "decr",
		"touch", "delete", "stats", "watch", "version", "quit":
		return true
	}
	return false
}

func (e *Env) version() string {
	if st := e.Settings; st != nil && st.Version != "" {
		return st.Version
	}
	return "unknown"
}

// storage runs set, add, replace, append, prepend and cas as memcached's
// parser (1.6.45) reads them: fewer than five tokens, or a length token
// that is not a plain number in range, is a bad command line and nothing
// is swallowed (there is no telling where a data block would end). Once
// the length is known, every other refusal (a key over 250 bytes, a bad
// flags, exptime or CAS token, a missing CAS) swallows the data block
// after the reply, so client data never runs as a command. Extra tokens
// are ignored; the last one decides noreply.
func (s *Session) storage(line, rest []byte, n int, mode store.Mode) (int, Status) {
	if n < storageMinTokens {
		s.reply(rBadFormat)
		return 0, NeedMore
	}
	vlen, ok := parseStrictInt32(s.text.token(line, 4))
	if !ok || vlen < 0 || vlen > math.MaxInt32-2 {
		s.reply(rBadFormat)
		return 0, NeedMore
	}
	s.text.setNoreply(line, n)
	rejected := func() (int, Status) {
		s.reply(rBadFormat)
		s.input.swallow = int64(vlen) + 2
		return 0, NeedMore
	}
	key := s.text.token(line, 1)
	if !validKey(key) {
		return rejected()
	}
	flags, ok1 := parseUint32(s.text.token(line, 2))
	exptime, ok2 := parseInt32(s.text.token(line, 3))
	if !ok1 || !ok2 {
		return rejected()
	}
	var cas uint64
	if mode == store.ModeCAS {
		if n < storageMinTokens+1 {
			return rejected()
		}
		if cas, ok = parseStrictUint64(s.text.token(line, 5)); !ok {
			return rejected()
		}
	}
	st := s.env.Store
	total := int(vlen) + 2
	if int(vlen) > st.MaxValueSize(len(key), flags) {
		if s.env.detailEnabled() {
			s.env.recordPrefix(key, 's', false)
		}
		s.reply(rTooLarge)
		s.env.counters.storeTooLarge.Add(1)
		if s.env.watching() != 0 {
			s.logRefused(key, mode, mode == store.ModeSet)
		}
		// memcached drops a set's old value rather than leave it stale.
		if mode == store.ModeSet {
			st.Discard(key) // uncounted, as in memcached
		}
		s.input.swallow = int64(total)
		return 0, NeedMore
	}
	data, ok, got := s.receiving(line, rest, key, total, false)
	if !ok {
		return got, NeedMore // waiting for the data, or receiving it (recv.go)
	}
	// Counted once the data is here: the line may be parsed more than once.
	if s.env.detailEnabled() {
		s.env.recordPrefix(key, 's', false)
	}
	var value []byte
	if data != nil {
		value = data[:vlen]
	} else {
		data = rest // committing a reservation: rest is the terminator
		vlen = 0
	}
	if s.recv.badTerminator(data, int(vlen)) {
		s.env.Store.CountBadChunk(key, flags, total-2, s.recv.committing)
		s.reply(rBadChunk)
		return total, NeedMore
	}
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	res, _ := s.setItem(store.SetRequest{Mode: mode, Key: key, Flags: flags, Exptime: int64(exptime), Value: value, CAS: cas})
	if s.env.watching()&logMutations != 0 {
		s.logStoreResult(key, res, mode, int64(exptime), flags, total-2)
	}
	switch res {
	case store.Stored:
		s.reply(rStored)
	case store.NotStored:
		s.reply(rNotStored)
	case store.Exists:
		s.reply(rExists)
	case store.NotFound:
		s.reply(rNotFound)
	case store.TooLarge:
		s.env.counters.storeTooLarge.Add(1)
		s.reply(rTooLarge)
	case store.OutOfMemory:
		s.env.counters.storeNoMemory.Add(1)
		s.reply(rNoMemoryStore)
	default:
		s.reply("SERVER_ERROR Unhandled storage type.\r\n")
	}
	return total, NeedMore
}

// storeStatus and storeCmdName name a store result and mode as memcached's
// item_store log lines do.
func storeStatus(r store.Result) string {
	switch r {
	case store.Stored:
		return "stored"
	case store.Exists:
		return "exists"
	case store.NotFound:
		return "not_found"
	case store.TooLarge:
		return "too_large"
	case store.OutOfMemory:
		return "no_memory"
	}
	return "not_stored"
}

func storeCmdName(m store.Mode) string {
	switch m {
	case store.ModeSet:
		return "set"
	case store.ModeAdd:
		return "add"
	case store.ModeReplace:
		return "replace"
	case store.ModeAppend:
		return "append"
	case store.ModePrepend:
		return "prepend"
	case store.ModeCAS:
		return "cas"
	}
	return "na"
}

// keyedCommand checks the shape shared by commands of the form
// "<cmd> <key> ... [noreply]" as memcached's parser (1.6.45) does: at
// least want tokens (else a bad command line, whatever the last token),
// extra ones ignored, the last deciding noreply. It returns the key, or
// replies with memcached's error and returns false.
func (s *Session) keyedCommand(line []byte, n, want int) ([]byte, bool) {
	if n < want {
		s.reply(rBadFormat)
		return nil, false
	}
	s.text.setNoreply(line, n)
	key := s.text.token(line, 1)
	if !validKey(key) {
		s.reply(rBadFormat)
		return nil, false
	}
	return key, true
}

func (s *Session) arithmetic(line []byte, n int, decr bool) {
	key, ok := s.keyedCommand(line, n, 3)
	if !ok {
		return
	}
	delta, ok := parseStrictUint64(s.text.token(line, 2))
	if !ok {
		s.reply(rBadDelta)
		return
	}
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	var v uint64
	res := s.env.Store.Arith(key, store.ArithRequest{Delta: delta, Decr: decr, Held: s.heldBy(key)},
		func(_ store.Item, value uint64, _ bool) { v = value })
	switch res {
	case store.Stored:
		if !s.text.noreply {
			s.out = strconv.AppendUint(s.out, v, 10)
			s.out = append(s.out, crlf...)
		}
	case store.NotFound:
		s.reply(rNotFound)
	case store.NonNumeric:
		s.reply(rNonNumeric)
	case store.OutOfMemory:
		s.reply(rNoMemory)
	default:
		s.reply(rNotFound)
	}
}

// delete takes any tokens after the key in memcached 1.6.45, which
// dropped its check for the old hold-time argument; the last token decides
// noreply.
func (s *Session) delete(line []byte, n int) {
	key, ok := s.keyedCommand(line, n, 2)
	if !ok {
		return
	}
	if s.env.detailEnabled() {
		s.env.recordPrefix(key, 'd', false)
	}
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	deleted := s.deleteTextLogged(key)
	if deleted {
		s.reply(rDeleted)
	} else {
		s.reply(rNotFound)
	}
}

func (s *Session) touch(line []byte, n int) {
	key, ok := s.keyedCommand(line, n, 3)
	if !ok {
		return
	}
	exptime, ok := parseStrictInt32(s.text.token(line, 2))
	if !ok {
		s.reply(rBadExptime)
		return
	}
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	touched := s.env.Store.Touch(key, int64(exptime))
	if touched {
		s.reply(rTouched)
	} else {
		s.reply(rNotFound)
	}
}

func (s *Session) flushAll(line []byte, n int) {
	s.text.setNoreply(line, n)
	if st := s.env.Settings; st != nil && st.FlushDisabled {
		// memcached counts the refused flush in cmd_flush.
		s.env.Store.CountFlush()
		s.reply("CLIENT_ERROR flush_all not allowed\r\n")
		return
	}
	var delay int32
	// The delay is the first argument unless the only argument is noreply.
	plain := 1
	if s.text.noreply {
		plain = 2
	}
	if n != plain {
		var ok bool
		if delay, ok = parseStrictInt32(s.text.token(line, 1)); !ok {
			s.env.Store.CountFlush() // memcached counts it before reading its arguments
			s.reply(rBadExptime)
			return
		}
	}
	if delay < 0 {
		delay = 0 // memcached flushes now for a negative delay
	}
	s.env.flush(int64(delay))
	s.reply(rOK)
}

func (s *Session) verbosity(line []byte, n int) {
	s.text.setNoreply(line, n)
	level, ok := uint32(0), false
	if n >= 2 {
		level, ok = parseStrictUint32(s.text.token(line, 1))
	}
	if !ok {
		s.reply(rBadFormat)
		return
	}
	if level > maxVerbosity {
		level = maxVerbosity
	}
	if st := s.env.Settings; st != nil && st.Verbosity != nil {
		st.Verbosity.Store(int32(level))
	}
	// The new level applies from this reply on, as in memcached: "verbosity
	// 2" logs its own ">fd OK", "verbosity 0" does not.
	s.log.verbose = s.env.verboseOn()
	s.reply(rOK)
}
