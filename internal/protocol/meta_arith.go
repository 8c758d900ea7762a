package protocol

import (
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// Meta arithmetic: `ma <key> <flags>*`, incr/decr with a delta (D), a mode
// (MI, M+, MD, M-), an optional CAS (C), auto-creation on a miss (N with J as
// the initial value), a new TTL (T), and the value, TTL and CAS returned.

const (
	rMetaArithBadMode = "CLIENT_ERROR invalid mode for ma M token\r\n"
	rNoMemoryArith    = "SERVER_ERROR Out of memory allocating new item\r\n"
)

func (s *Session) metaArith(line []byte, n int) {
	if !s.metaPrologue(line, n, true) {
		return
	}
	f := &s.meta.flags
	decr := false
	switch f.mode {
	case 0, 'I', '+':
	case 'D', '-':
		decr = true
	default:
		s.out = append(s.out, rMetaArithBadMode...)
		return
	}
	delta := uint64(1)
	if s.text.seenFlag(line, n, 'D') {
		delta = f.delta
	}
	var cas uint64
	if f.hasCAS {
		cas = f.cas
	}
	s.meta.line, s.meta.tokens = line, n
	start := len(s.out)
	res := s.env.Store.Arith(s.meta.key, store.ArithRequest{
		Delta: delta, Decr: decr, CAS: cas, Vivify: f.vivify, Initial: f.initial, NewCAS: f.newCAS,
		Held: s.heldBy(s.meta.key),
	}, s.meta.arithFn)
	if res == store.Stored && s.meta.arithCreated && s.env.watching() != 0 {
		// memcached sets N's TTL after the add it logs: ttl=0.
		s.logVivified(s.meta.key, f.initial, 0)
	}
	// memcached checks an opaque's length as it writes the reply: after
	// the arithmetic (and the flags before the opaque) took effect, unless
	// it failed with an error of its own; shown even under q.
	if res != store.NonNumeric && res != store.OutOfMemory && s.opaqueTooLong(line, n, 2) {
		s.out = append(s.out[:start], rMetaOpaqueTooLong...)
		return
	}
	switch res {
	case store.Stored:
		// q hides a success, a created item included (memcached 1.6.40 on).
		if f.quiet {
			s.out = s.out[:start]
		}
		return
	case store.NonNumeric:
		s.out = append(s.out, rNonNumeric...)
		return
	case store.OutOfMemory:
		if f.vivify {
			s.out = append(s.out, rNoMemoryArith...)
		} else {
			s.out = append(s.out, rNoMemory...)
		}
		return
	case store.Exists:
		s.out = append(s.out, "EX"...)
	default:
		s.out = append(s.out, "NF"...)
	}
	s.out = s.appendOpaqueAndKey(s.out, line, n, 2, s.meta.key, f.keyBinary)
	s.out = append(s.out, crlf...)
}

// metaArithItem formats the reply for an item ma changed or created, its
// flags applied in request order as memcached does.
func (s *Session) metaArithItem(it store.Item, value uint64, created bool) {
	line, n, f := s.meta.line, s.meta.tokens, &s.meta.flags
	s.meta.arithCreated = created
	var digits [20]byte
	num := strconv.AppendUint(digits[:0], value, 10)
	b := s.out
	if f.value {
		b = append(b, "VA "...)
		b = strconv.AppendInt(b, int64(len(num)), 10)
	} else {
		b = append(b, "HD"...)
	}
	for i := 2; i < n; i++ {
		tok := s.text.token(line, i)
		switch tok[0] {
		case 'c':
			b = append(b, " c"...)
			b = strconv.AppendUint(b, it.CAS(), 10)
		case 't':
			b = append(b, " t"...)
			b = strconv.AppendInt(b, s.env.metaTTL(it), 10)
		case 'T':
			it.SetExptime(int64(f.ttl))
		case 'N':
			if created {
				it.SetExptime(int64(f.vivifyTTL))
			}
		case 'O':
			if len(tok) > metaMaxOpaque {
				return // memcached stops at it: later flags are not applied
			}
			b = append(b, ' ')
			b = append(b, tok...)
		case 'k':
			b = appendMetaKey(b, s.meta.key, f.keyBinary)
		}
	}
	if f.value {
		b = append(b, crlf...)
		b = append(b, num...)
	}
	s.out = append(b, crlf...)
}
