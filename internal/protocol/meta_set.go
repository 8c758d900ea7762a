package protocol

import (
	"math"
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// Meta set: `ms <key> <datalen> <flags>*\r\n<data>\r\n`.
//
// The data block is client data and must never be run as a command. Once the
// datalen token parses, every error swallows the block, as memcached 1.6.40
// on does. When the length itself is missing or malformed (or a flag token
// starts with a byte memcached's tokenizer refuses) there is no way to tell
// where the block ends; as memcached, the error is sent (even with q) and
// the connection stays open, so whatever follows is read as the next
// command line (metaget.t relies on this).

const rMetaSetBadMode = "CLIENT_ERROR invalid mode for ms M token\r\n"

func (s *Session) metaSet(line, rest []byte, n int) (int, Status) {
	if n < 3 || s.badFlagToken(line, n, 3) {
		s.out = append(s.out, rBadFormat...)
		return 0, NeedMore
	}
	v, ok := parseStrictInt32(s.text.token(line, 2))
	if !ok || v < 0 || v > math.MaxInt32-2 {
		s.out = append(s.out, rBadFormat...)
		return 0, NeedMore
	}
	total := int(v) + 2 // the data block's length with its "\r\n"
	fail := func(msg string) (int, Status) {
		s.out = append(s.out, msg...)
		s.input.swallow = int64(total)
		return 0, NeedMore
	}
	if int(s.text.tokens[1].end-s.text.tokens[1].start) > store.MaxKeyLen {
		return fail(rBadFormat)
	}
	if n > metaMaxTokens {
		return fail(rMetaFlagsTooLong)
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
	// memcached 1.6.45 looks at the opaques once the item is allocated.
	if s.opaqueTooLong(line, n, 3) {
		return fail(rMetaOpaqueTooLong)
	}
	if f.vivify && (mode == store.ModeAppend || mode == store.ModePrepend) &&
		!s.recv.committing && len(rest) < total {
		// Whole in the read buffer: a miss stores the data anew
		// (appendVivify), which a reservation spent on the append
		// could not.
		return -total, NeedMore
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
		s.env.Store.CountBadChunk(key, f.flags, total-2, s.recv.committing)
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
	req := store.SetRequest{
		Mode: mode, Key: key, Flags: f.flags, Exptime: int64(f.ttl), Value: value,
		CAS: f.cas, Invalidate: f.invalidate && mode == store.ModeCAS, KeyBinary: keyBinary,
		NewCAS: f.newCAS,
	}
	res, cas := s.setItem(req)
	if f.vivify && (mode == store.ModeAppend || mode == store.ModePrepend) {
		res, cas = s.appendVivify(req, res, cas)
	}
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
		case 's':
			b = append(b, " s"...)
			b = strconv.AppendInt(b, int64(s.storedSize(key, mode, res, vlen)), 10)
		}
	}
	s.out = append(b, crlf...)
	return total, NeedMore
}

// appendVivify finishes an append or prepend sent with N (memcached 1.6.20
// on): a miss stores the data as a new item with N's TTL, ignoring any CAS,
// as memcached's APPENDVIV does under its item lock. Here it is an add
// after the append missed; should another client create the item in
// between, the append is tried again, so the data always lands once.
func (s *Session) appendVivify(req store.SetRequest, res store.Result, cas uint64) (store.Result, uint64) {
	req.Again = true // counted as a set by the append already
	for try := 0; try < 3 && res == store.NotStored; try++ {
		add := req
		add.Mode, add.Exptime, add.CAS = store.ModeAdd, int64(s.meta.flags.vivifyTTL), 0
		if res, cas = s.env.Store.SetItem(add); res != store.NotStored {
			return res, cas
		}
		res, cas = s.env.Store.SetItem(req)
	}
	return res, cas
}

// storedSize is ms's s flag: the item's value length after the store,
// which for a stored append or prepend is the whole joined value, else
// the length of the data sent.
func (s *Session) storedSize(key []byte, mode store.Mode, res store.Result, sent int) int {
	if res != store.Stored || mode != store.ModeAppend && mode != store.ModePrepend {
		return sent
	}
	size := sent
	s.env.Store.View(key, func(it store.Item) { size = it.ValueLen() })
	return size
}
