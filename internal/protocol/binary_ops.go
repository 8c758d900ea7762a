package protocol

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// The binary protocol's commands, each answering with the status codes,
// texts and CAS values memcached 1.6.18 sends.

// binStore runs set/add/replace (with 8 bytes of extras: flags, expiration)
// and append/prepend once the value has arrived. A value too large for the
// cache (with nonzero flags, 4 bytes less) is answered at once and swallowed
// as it arrives.
func (s *Session) binStore(in []byte, head int, op uint8, ext, key []byte, vlen int) (int, Status) {
	if s.log.verbose && !s.bin.cmdLogged {
		s.bin.cmdLogged = true
		lenText := "Value len is " + strconv.Itoa(vlen)
		switch op {
		case opSet:
			s.vlogBinCommand("SET", key, " "+lenText)
		case opAdd:
			s.vlogBinCommand("ADD", key, " "+lenText)
		case opReplace:
			s.vlogBinCommand("REPLACE", key, " "+lenText)
		default:
			s.vlogBinText([]byte(lenText))
		}
	}
	st := s.env.Store
	var flags uint32
	if len(ext) == 8 {
		flags = binary.BigEndian.Uint32(ext[0:4])
	}
	if vlen > st.MaxValueSize(len(key), flags) {
		if s.env.detailEnabled() { // memcached counts the set before it allocates
			s.env.recordPrefix(key, 's', false)
		}
		// memcached 1.6.45 counts store_too_large and store_no_memory for
		// the text and meta protocols only.
		s.binError(&s.bin.header, statusTooLarge)
		if s.env.watching() != 0 {
			s.logRefused(key, binStoreMode(op, s.bin.header.cas), op == opSet)
		}
		if op == opSet {
			st.Discard(key) // a failed set must not leave the old value
		}
		s.input.swallow = int64(vlen)
		return head, NeedMore
	}
	value, ok, got := s.receiving(in[:head], in[head:], key, vlen, true)
	if !ok {
		if got < 0 {
			return got - head, NeedMore // the whole request must be here
		}
		return head + got, NeedMore // receiving it into the store (recv.go)
	}
	if s.env.detailEnabled() { // once the value is here: the header may be parsed again
		s.env.recordPrefix(key, 's', false)
	}
	req := store.SetRequest{Key: key, Value: value, CAS: s.bin.header.cas}
	if st := s.env.Settings; st != nil && !st.CASEnabled {
		// Under -C memcached's items have no CAS field: ITEM_set_cas does
		// nothing, so the request's CAS is never compared.
		req.CAS = 0
	}
	if len(ext) == 8 {
		req.Flags = binary.BigEndian.Uint32(ext[0:4])
		req.Exptime = int64(binary.BigEndian.Uint32(ext[4:8]))
	}
	req.Mode = binStoreMode(op, req.CAS)
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	res, cas := s.setItem(req)
	if s.env.watching()&logMutations != 0 {
		s.logStoreResult(key, res, req.Mode, req.Exptime, req.Flags, vlen)
	}
	switch res {
	case store.Stored:
		s.binReply(&s.bin.header, nil, nil, nil, cas)
	case store.Exists:
		s.binError(&s.bin.header, statusKeyExists)
	case store.NotFound:
		s.binError(&s.bin.header, statusKeyNotFound)
	case store.OutOfMemory:
		s.binErrorText(&s.bin.header, statusNoMemory, "Out of memory allocating item")
	default:
		// Not stored (or too large once appended): memcached words it by
		// command, the one place its binary codes depend on the opcode.
		switch req.Mode {
		case store.ModeAdd:
			s.binError(&s.bin.header, statusKeyExists)
		case store.ModeReplace:
			s.binError(&s.bin.header, statusKeyNotFound)
		default:
			s.binError(&s.bin.header, statusNotStored)
		}
	}
	return head + vlen, NeedMore
}

// binStoreMode is the store mode of a storage opcode. As memcached: a CAS
// makes set, add and replace a compare-and-swap (an add with a CAS fails on
// a missing key, unlike ms's add).
func binStoreMode(op uint8, cas uint64) store.Mode {
	switch {
	case cas != 0 && (op == opSet || op == opAdd || op == opReplace):
		return store.ModeCAS
	case op == opAdd:
		return store.ModeAdd
	case op == opReplace:
		return store.ModeReplace
	case op == opAppend:
		return store.ModeAppend
	case op == opPrepend:
		return store.ModePrepend
	}
	return store.ModeSet
}

// binGet runs get/getk/gat/gatk/touch and their quiet forms. ext holds the
// expiration of the touching commands.
func (s *Session) binGet(op uint8, ext, key []byte) {
	s.bin.key = key
	s.bin.replyKey = op == opGetK || op == opGATK
	s.bin.replyValue = op != opTouch
	if s.log.verbose {
		if ext != nil {
			s.vlogBinCommand("TOUCH", key, "")
		} else {
			s.vlogBinCommand("GET", key, "")
		}
	}
	st := s.env.Store
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	var hit, onFlash bool
	if ext != nil {
		hit, onFlash = st.GetAndTouchFlash(key, int64(binary.BigEndian.Uint32(ext)), s.bin.getFn, s.flashRead())
	} else {
		hit, onFlash = st.GetFlash(key, s.bin.getFn, s.flashRead())
	}
	if hit && !onFlash {
		s.heldHit(key)
	}
	if onFlash {
		if s.bin.replyValue {
			// No memory for the read: memcached answers and counts a miss.
			if hit = s.holdBinaryFlash(); !hit {
				s.flash.w.fr.Refused(ext != nil, true)
			}
		} else {
			s.binEmitValue(nil, s.flash.w.fr.Meta())
		}
	}
	if s.env.detailEnabled() {
		s.env.recordPrefix(key, 'g', hit)
	}
	if hit || s.bin.quiet {
		return
	}
	if s.bin.replyKey {
		// A keyed miss carries the key and no text.
		at := len(s.out)
		s.out = appendBinHeader(s.out, s.bin.header.opcode, statusKeyNotFound, 0, uint16(len(key)), uint32(len(key)), s.bin.header.opaque, 0)
		if s.log.verbose {
			s.vlogBinResponse(at, false)
		}
		s.out = append(s.out, key...)
		return
	}
	s.binError(&s.bin.header, statusKeyNotFound)
}

// binEmitValue writes a get hit; it is the store's callback, bound once.
func (s *Session) binEmitValue(value []byte, m store.Meta) {
	keyLen := 0
	if s.bin.replyKey {
		keyLen = len(s.bin.key)
	}
	body := 4 + keyLen
	if s.bin.replyValue {
		body += len(value)
	}
	at := len(s.out)
	b := appendBinHeader(s.out, s.bin.header.opcode, statusOK, 4, uint16(keyLen), uint32(body), s.bin.header.opaque, m.CAS)
	if s.log.verbose {
		s.out = b
		s.vlogBinResponse(at, true)
	}
	b = binary.BigEndian.AppendUint32(b, m.Flags)
	if s.bin.replyKey {
		b = append(b, s.bin.key...)
	}
	if s.bin.replyValue {
		ref := store.ValueRef{}
		if s.pinsValue(len(value)) {
			ref = s.env.Store.RefOf(s.bin.key, value)
		}
		if ref.Len() == len(value) && ref.Len() > 0 {
			b = s.startSend(b, value, ref, false)
		} else {
			// Whole: a small value, or one read from flash, which the
			// store cannot pin.
			b = append(s.replyRoom(b, len(value)), value...)
		}
	}
	s.out = b
}

// binDelete runs delete: the request's CAS, when nonzero, must match.
func (s *Session) binDelete(key []byte) {
	if s.log.verbose {
		s.vlogBinText(append([]byte("Deleting "), key...))
	}
	if s.env.detailEnabled() {
		s.env.recordPrefix(key, 'd', false)
	}
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	res := s.env.Store.DeleteItem(key, store.DeleteRequest{CAS: s.bin.header.cas, HasCAS: s.bin.header.cas != 0})
	switch res {
	case store.Stored:
		s.binReply(&s.bin.header, nil, nil, nil, 0)
	case store.Exists:
		s.binError(&s.bin.header, statusKeyExists)
	default:
		s.binError(&s.bin.header, statusKeyNotFound)
	}
}

// binArith runs incr/decr. Extras: delta (8), initial (8), expiration (4);
// an expiration of 0xffffffff means "do not create on a miss".
func (s *Session) binArith(decr bool, ext, key []byte) {
	delta := binary.BigEndian.Uint64(ext[0:8])
	initial := binary.BigEndian.Uint64(ext[8:16])
	exp := binary.BigEndian.Uint32(ext[16:20])
	if s.log.verbose { // memcached prints "incr" for decr too, and its numbers as signed or not as here
		line := append([]byte("incr "), key...)
		line = fmt.Appendf(line, " %d, %d, %d", int64(delta), initial, int32(exp))
		s.vlogBinText(line)
	}
	s.bin.arithExptime, s.bin.arithCreated = int64(exp), false
	if s.env.watching()&logFetchers != 0 {
		s.logLookup(key)
	}
	res := s.env.Store.Arith(key, store.ArithRequest{
		Delta: delta, Decr: decr, CAS: s.bin.header.cas, Vivify: exp != 0xffffffff, Initial: initial,
		Held: s.heldBy(key),
	}, s.bin.arithFn)
	if res == store.Stored && s.bin.arithCreated && s.env.watching() != 0 {
		s.logVivified(key, initial, s.env.Store.LogTTL(int64(exp)))
	}
	switch res {
	case store.Stored:
		var v [8]byte
		binary.BigEndian.PutUint64(v[:], s.bin.arithValue)
		s.binReply(&s.bin.header, nil, nil, v[:], s.bin.arithCAS)
	case store.NonNumeric:
		s.binError(&s.bin.header, statusDeltaBadValue)
	case store.Exists:
		s.binError(&s.bin.header, statusKeyExists)
	case store.OutOfMemory:
		s.binErrorText(&s.bin.header, statusNoMemory, "Out of memory incrementing value")
	default:
		s.binError(&s.bin.header, statusKeyNotFound)
	}
}

// binArithItem collects the result of an incr/decr under the item's lock;
// an item it created gets the request's expiration.
func (s *Session) binArithItem(it store.Item, value uint64, created bool) {
	if created {
		it.SetExptime(s.bin.arithExptime)
	}
	s.bin.arithValue, s.bin.arithCAS, s.bin.arithCreated = value, it.CAS(), created
}

// binFlush runs flush with an optional 4-byte expiration (a delay), as
// memcached's process_bin_flush: under -F it answers "Auth failure." and
// counts nothing; otherwise it is flush_all's flush.
func (s *Session) binFlush(ext []byte) {
	if st := s.env.Settings; st != nil && st.FlushDisabled {
		s.binError(&s.bin.header, statusAuthError)
		return
	}
	var delay int64
	if len(ext) == 4 {
		delay = int64(binary.BigEndian.Uint32(ext))
	}
	s.env.flush(delay)
	s.binReply(&s.bin.header, nil, nil, nil, 0)
}
