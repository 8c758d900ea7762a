package protocol

import (
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// Meta get (mg), meta debug (me) and meta no-op (mn).

const (
	rMetaMiss = "EN"
	rMetaNoop = "MN\r\n"
)

// metaCommand dispatches a two-letter command starting with 'm'. It returns
// like execute.
func (s *Session) metaCommand(line, rest []byte, n int) (int, Status) {
	switch line[s.text.tokens[0].start+1] {
	case 'g':
		s.metaGet(line, n)
	case 's':
		return s.metaSet(line, rest, n)
	case 'd':
		s.metaDelete(line, n)
	case 'a':
		s.metaArith(line, n)
	case 'n':
		s.replyLogged(rMetaNoop)
		s.markFlushed() // memcached flushes its replies at mn
	case 'e':
		s.metaDebug(line, n)
	default:
		return s.unknownCommand(line, n)
	}
	return 0, NeedMore
}

// metaPrologue runs the checks every mg/md/ma line gets before its flags
// mean anything, in memcached 1.6.45's order: a line without a key or with
// a flag token its tokenizer refuses is a bad command line; then the key's
// length, the token limit and the flags themselves. ma answers every one
// of the latter with its own message. It returns false after replying.
// An opaque's length is each command's own check: memcached looks at it
// where it copies the opaque into the reply.
func (s *Session) metaPrologue(line []byte, n int, arith bool) bool {
	if n < 2 || s.badFlagToken(line, n, 2) {
		s.out = append(s.out, rBadFormat...)
		return false
	}
	msg := ""
	switch {
	case int(s.text.tokens[1].end-s.text.tokens[1].start) > store.MaxKeyLen:
		msg = rBadFormat
	case n > metaMaxTokens:
		msg = rMetaFlagsTooLong
	default:
		msg = s.parseMetaFlags(line, n, 2)
		if msg == "" && !s.meta.keyOK() {
			msg = rBadFormat
		}
	}
	if msg != "" {
		if arith {
			msg = rMetaInvalidOrDup
		}
		s.out = append(s.out, msg...)
		return false
	}
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(s.meta.key)
	}
	return true
}

func (s *Session) metaGet(line []byte, n int) {
	if !s.metaPrologue(line, n, false) {
		return
	}
	s.meta.line, s.meta.tokens = line, n
	start := len(s.out)
	s.meta.opaqueTooLong = false
	h := s.hashKey(s.meta.key)
	hit := s.env.Store.MetaGetHashed(s.meta.key, h, s.meta.flags.vivify, s.meta.flags.newCAS, s.meta.getFn)
	if hit {
		s.held.note(h) // memcached's reply holds the item, value or not
	}
	if s.meta.flashHeld {
		// The value is on flash: its line waits for the read (flash.go).
		s.meta.flashHeld = false
		w := s.flash.w
		w.kind, w.quiet = flashMeta, s.meta.flags.quiet
		if !s.submitFlash(w) {
			w.fr.Refused(s.meta.flashTouch, true) // memcached counts a miss
			if !w.quiet {
				s.metaFlashOOM(w.head, line, n)
			}
		}
		return
	}
	// memcached checks an opaque's length as it writes the reply: after
	// the lookup, an autovivify and the flags before the opaque took
	// effect, and answering the error even under q.
	if s.meta.opaqueTooLong || !hit && s.opaqueTooLong(line, n, 2) {
		s.out = append(s.out[:start], rMetaOpaqueTooLong...)
		return
	}
	if hit {
		return
	}
	if s.meta.flags.quiet {
		return // q hides a miss
	}
	s.out = append(s.out, rMetaMiss...)
	s.out = s.appendOpaqueAndKey(s.out, line, n, 2, s.meta.key, s.meta.flags.keyBinary)
	s.out = append(s.out, crlf...)
}

// metaFlashOOM answers an mg whose flash read found no memory as
// memcached 1.6.45 does: its line was already queued when the read
// failed, and the miss it falls back to is written after that line in the
// same buffer and sent from the buffer's start, so the client reads the
// line twice, then EN with the opaque and key. (q drops it all.)
func (s *Session) metaFlashOOM(head, line []byte, n int) {
	s.out = append(s.out, head...)
	s.out = append(s.out, head...)
	s.out = append(s.out, rMetaMiss...)
	s.out = s.appendOpaqueAndKey(s.out, line, n, 2, s.meta.key, s.meta.flags.keyBinary)
	s.out = append(s.out, crlf...)
}

// metaGetItem formats a hit (or a vivified item) while the store holds the
// item: the flags are applied and answered in the order the client sent
// them, as memcached does, so that "t T30" shows the TTL before the touch
// and "T30 t" the one after. It reports whether the TTL was set.
func (s *Session) metaGetItem(it store.Item, created bool) bool {
	line, n, f := s.meta.line, s.meta.tokens, &s.meta.flags
	b := s.out
	// C (memcached 1.6.40 on): the client holds this version already, so
	// the value is left out.
	value := f.value && !(f.hasCAS && it.CAS() == f.cas)
	if value {
		b = append(b, "VA "...)
		b = appendDecimal(b, uint64(it.ValueLen()))
	} else {
		b = append(b, "HD"...)
	}
	// Read before this access changes them.
	fetched, idle := it.Fetched(), it.IdleSeconds()
	won, touched := false, false
	for i := 2; i < n; i++ {
		tok := s.text.token(line, i)
		switch tok[0] {
		case 'T':
			touched = true
			it.SetExptime(int64(f.ttl))
		case 'N':
			if created {
				it.SetExptime(int64(f.vivifyTTL))
				won = true
			}
		case 'R':
			// Win the recache token when the item expires sooner than
			// the client's threshold and nobody holds the token yet.
			// Compared on memcached's relative clock, where every
			// time before it started is 1.
			if !it.TokenSent() && !created && it.Exptime() != 0 &&
				s.env.relTime(it.Exptime()) < s.env.relTime(it.AbsExptime(int64(f.recacheTTL))) {
				won = true
			}
		case 's':
			b = append(b, " s"...)
			b = appendDecimal(b, uint64(it.ValueLen()))
		case 't':
			b = append(b, " t"...)
			b = strconv.AppendInt(b, s.env.metaTTL(it), 10)
		case 'c':
			b = append(b, " c"...)
			b = strconv.AppendUint(b, it.CAS(), 10)
		case 'f':
			b = append(b, " f"...)
			b = appendDecimal(b, uint64(it.Flags()))
		case 'l':
			b = append(b, " l"...)
			b = strconv.AppendInt(b, idle, 10)
		case 'h':
			if fetched {
				b = append(b, " h1"...)
			} else {
				b = append(b, " h0"...)
			}
		case 'O':
			if len(tok) > metaMaxOpaque {
				// memcached stops here; a plain mg (no flag that locks
				// the item) bumped it when it fetched it.
				s.meta.opaqueTooLong = true
				if !f.noUpdate && !s.metaLocks(line, n) {
					it.Bump()
				}
				return touched
			}
			b = append(b, ' ')
			b = append(b, tok...)
		case 'k':
			b = appendMetaKey(b, it.Key(), it.KeyBinary())
		}
	}
	// Z before W: a client never sees both.
	if it.TokenSent() {
		b = append(b, " Z"...)
	}
	if it.Stale() {
		b = append(b, " X"...)
		if !it.TokenSent() {
			won = true // the first reader of a stale item recaches it
		}
	}
	if won {
		b = append(b, " W"...)
		it.SetTokenSent()
	}
	b = append(b, crlf...)
	if value && it.Flash() { // (an opaque too long returned above)
		w := s.flashWait()
		w.head = append(w.head[:0], b[len(s.out):]...)
		b = b[:len(s.out)]
		it.FlashRead(&w.fr)
		s.meta.flashHeld, s.meta.flashTouch = true, touched
	} else if value {
		if n := it.ValueLen(); s.pinsValue(n) {
			b = s.startSendHead(b, it.ValueHead(), n, it.Ref(), true)
		} else {
			b = it.AppendValue(s.replyRoom(b, n+len(crlf)))
			b = append(b, crlf...)
		}
	}
	s.out = b
	if !f.noUpdate {
		it.Bump()
	}
	return touched
}

// metaTTL is memcached's meta t value: -1 for no expiry, else the seconds
// left. An item that this very request gave a TTL in the past (T-1, N-1, an
// absolute time already gone) is still answered, and memcached subtracts in
// unsigned 32-bit seconds on its relative clock, where a past time before
// its process_started is 1: it prints a number near 2^32, not a negative one (nor -1,
// which would claim the item never expires).
func (e *Env) metaTTL(it store.Item) int64 {
	exp, ttl := it.Exptime(), it.TTL()
	if exp == 0 || ttl > 0 {
		return ttl
	}
	now := exp - ttl
	// A negative TTL is stored as a second ago; memcached makes it
	// REALTIME_MAXDELTA+1, an absolute time long before it started.
	rel := int64(1)
	if ttl != -1 {
		rel = e.relTime(exp)
	}
	return int64(uint32(rel - e.relTime(now)))
}

// relTime converts unix seconds to memcached's relative time (seconds since
// its process_started), where any time not after process_started is 1.
func (e *Env) relTime(t int64) int64 {
	started := e.StartUnix - processStartedSlack
	if t <= started {
		return 1
	}
	return t - started
}

// metaLocks reports whether mg's flags make memcached fetch the item locked,
// deferring its LRU bump to the end of the reply: N, T, R, l and h.
func (s *Session) metaLocks(line []byte, n int) bool {
	for _, c := range []byte("NTRlh") {
		if s.text.seenFlag(line, n, c) {
			return true
		}
	}
	return false
}

// metaDebug runs `me <key> [b]`: the item's internal state, value excluded.
func (s *Session) metaDebug(line []byte, n int) {
	if n < 2 || s.badFlagToken(line, n, 2) || int(s.text.tokens[1].end-s.text.tokens[1].start) > store.MaxKeyLen {
		s.out = append(s.out, rBadFormat...)
		return
	}
	s.meta.key = s.text.token(line, 1)
	// memcached 1.6.40 on reads b only with a fourth token after it.
	binary := n >= 4 && string(s.text.token(line, 2)) == "b"
	if binary {
		k, ok := decodeBase64Key(s.meta.keyBuf[:0], s.meta.key)
		s.meta.keyBuf = k
		if !ok {
			s.out = append(s.out, rBadFormat...)
			return
		}
		s.meta.key = k
	} else if !validKey(s.meta.key) {
		s.out = append(s.out, rBadFormat...)
		return
	}
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(s.meta.key)
	}
	if !s.env.Store.View(s.meta.key, s.meta.debugFn) {
		s.replyLogged(rMetaMiss + crlf)
	}
	s.env.counters.metaCmds.Add(1)
}

func (s *Session) metaDebugItem(it store.Item) {
	b := append(s.out, "ME "...)
	if it.KeyBinary() {
		b = appendBase64(b, it.Key())
	} else {
		b = append(b, it.Key()...)
	}
	// The seconds left (memcached 1.6.24 on; now-exptime before).
	b = append(b, " exp="...)
	if ttl := it.TTL(); ttl < 0 {
		b = append(b, "-1"...)
	} else {
		b = strconv.AppendInt(b, int64(int32(ttl)), 10)
	}
	b = append(b, " la="...)
	b = strconv.AppendInt(b, it.IdleSeconds(), 10)
	b = append(b, " cas="...)
	b = strconv.AppendUint(b, it.CAS(), 10)
	if it.Fetched() {
		b = append(b, " fetch=yes"...)
	} else {
		b = append(b, " fetch=no"...)
	}
	b = append(b, " cls="...)
	b = strconv.AppendInt(b, int64(it.Class()), 10)
	b = append(b, " size="...)
	b = strconv.AppendInt(b, int64(it.Size()), 10)
	s.out = append(b, crlf...)
}
