package protocol

import (
	"math"
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// Meta set: `ms <key> <datalen> <flags>*\r\n<data>\r\n`.
//
// The data block is client data and must never be run as a command. Once the
// datalen token parses, every error swallows the block, including the ones
// memcached reports before reading the length (a key over 250 bytes, too
// many tokens), where memcached would go on to execute the data as the next
// command line. When the length itself is missing or malformed there is no
// way to tell where the block ends; as memcached, the error is sent (even
// with q) and the connection stays open, so whatever follows is read as the
// next command line (metaget.t relies on this).

const rMetaSetBadMode = "CLIENT_ERROR invalid mode for ms M token\r\n"

func (s *Session) metaSet(line, rest []byte, n int) (int, Status) {
	if n < 2 {
		s.reply(rError)
		return 0, NeedMore
	}
	total := -1 // the data block's length with its "\r\n", once known
	if n >= 3 {
		if v, ok := parseInt32(s.text.token(line, 2)); ok && v >= 0 && v <= math.MaxInt32-2 {
			total = int(v) + 2
		}
	}
	fail := func(msg string) (int, Status) {
		s.out = append(s.out, msg...)
		if total < 0 {
			return 0, NeedMore
		}
		s.input.swallow = int64(total)
		return 0, NeedMore
	}
	if int(s.text.tokens[1].end-s.text.tokens[1].start) > store.MaxKeyLen {
		return fail(rBadFormat)
	}
	if n+1 > metaMaxTokens {
		return fail(rMetaFlagsTooLong)
	}
	if total < 0 {
		return fail(rBadFormat)
	}
	if msg := s.parseMetaFlags(line, n, 3); msg != "" {
		return fail(msg)
	}
	f := &s.meta.flags
	if !s.meta.keyOK() {
		return fail(rBadFormat)
	}
	mode := store.ModeSet
	switch f.mode {
	case 0, 'S':
	case 'E':
		mode = store.ModeAdd
	case 'A':
		mode = store.ModeAppend
	case 'P':
		mode = store.ModePrepend
	case 'R':
		mode = store.ModeReplace
	default:
		return fail(rMetaSetBadMode)
	}
	// memcached notes a long opaque while it reads the flags but answers
	// a bad mode first.
	if s.opaqueTooLong(line, n, 3) {
		return fail(rMetaOpaqueTooLong)
	}
	// As memcached: a CAS turns set and replace into a compare-and-swap;
	// add ignores it and append/prepend check it themselves.
	if f.hasCAS && (mode == store.ModeSet || mode == store.ModeReplace) {
		mode = store.ModeCAS
	}
	st := s.env.Store
	key := s.meta.key
	vlen := total - 2
	if vlen > st.MaxValueSize(len(key), f.flags) {
		s.env.counters.storeTooLarge.Add(1)
		if s.env.watching() != 0 {
			s.logRefused(key, mode, true)
		}
		// memcached drops the old value whatever the mode, so that a
		// failed store never leaves it behind looking current.
		st.Discard(key)
		return fail(rTooLarge)
	}
	data, ok, got := s.receiving(line, rest, key, total, false)
	if !ok {
		return got, NeedMore // waiting for the data, or receiving it (recv.go)
	}
	var value []byte
	if data != nil {
		value = data[:vlen]
	} else {
		data, vlen = rest, 0 // committing a reservation: rest is the terminator
	}
	if s.recv.badTerminator(data, vlen) {
		s.out = append(s.out, rBadChunk...) // shown even with q
		return total, NeedMore
	}
	vlen = total - 2
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	// memcached marks the key binary on the item ms sent; append and
	// prepend store a new item built from the old one, unmarked.
	keyBinary := f.keyBinary && mode != store.ModeAppend && mode != store.ModePrepend
	res, cas := s.setItem(store.SetRequest{
		Mode: mode, Key: key, Flags: f.flags, Exptime: int64(f.ttl), Value: value,
		CAS: f.cas, Invalidate: f.invalidate && mode == store.ModeCAS, KeyBinary: keyBinary,
		NewCAS: f.newCAS,
	})
	if s.env.watching()&logMutations != 0 {
		s.logStoreResult(key, res, mode, int64(f.ttl), f.flags, int(vlen))
	}
	var code string
	switch res {
	case store.Stored:
		if f.quiet {
			return total, NeedMore
		}
		code = "HD"
	case store.NotStored:
		code = "NS"
	case store.Exists:
		code = "EX"
	case store.NotFound:
		code = "NF"
	case store.TooLarge:
		s.env.counters.storeTooLarge.Add(1)
		s.out = append(s.out, rTooLarge...)
		return total, NeedMore
	case store.OutOfMemory:
		s.env.counters.storeNoMemory.Add(1)
		s.out = append(s.out, rNoMemoryStore...)
		return total, NeedMore
	default:
		s.out = append(s.out, "SERVER_ERROR Unhandled storage type.\r\n"...)
		return total, NeedMore
	}
	b := append(s.out, code...)
	for i := 3; i < n; i++ {
		switch tok := s.text.token(line, i); tok[0] {
		case 'O':
			b = append(b, ' ')
			b = append(b, tok...)
		case 'k':
			b = appendMetaKey(b, key, f.keyBinary)
		case 'c':
			b = append(b, " c"...)
			b = strconv.AppendUint(b, cas, 10)
		}
	}
	s.out = append(b, crlf...)
	return total, NeedMore
}
