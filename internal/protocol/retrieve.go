package protocol

import (
	"bytes"
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// multigetState is a retrieval command paused between two keys. The part of
// its line already served has been consumed, so the input starts at the next
// key; left is how many bytes of keys remain before the line's end (its "\r"
// or a NUL excluded, as memcached would read it).
type multigetState struct {
	active         bool
	withCAS, touch bool
	exptime        int32
	left           int
	// A line over the multiget bound is served as it arrives
	// (retrieve_open.go): open until its end arrives, left unused.
	open   bool
	keys   bool // open: a key was seen on the line
	skip   bool // open: an error was answered; the rest of the line is dropped
	hungry bool // open: every complete key is served; more input is needed
}

// retrieve runs get, gets, gat and gats over every key on the line (memcached
// has no limit on their number besides the line length). When the output
// budget runs out it returns Yield and how many bytes of the line it served;
// continueMultiget picks up from there.
func (s *Session) retrieve(line []byte, n int, withCAS, touch bool) (int, Status) {
	if n < 2 || touch && n < 3 {
		s.reply(rBadFormat) // memcached 1.6.40 on; ERROR before
		return 0, NeedMore
	}
	first := 1
	var exptime int32
	if touch {
		var ok bool
		if exptime, ok = parseStrictInt32(s.text.token(line, 1)); !ok {
			s.reply(rBadExptime)
			return 0, NeedMore
		}
		first = 2
	}
	from := len(line)
	if first < n {
		from = int(s.text.tokens[first].start)
	}
	// memcached stops at a bad key and drops the values gathered so far;
	// checking every key first gives the same reply and lets a long reply go
	// out in parts. The keys before the bad one were still fetched (and
	// touched, for gat), so they are here too, their values dropped.
	if ks := s.firstBadKey(line, first, n); ks >= 0 {
		// memcached takes each key's response object before looking
		// at the key: running out before the bad one is out of memory.
		// Else the error is answered with one object, the command's.
		switch s.fetchSilently(line[from:ks], touch, exptime) {
		case keysOutOfMemory:
			s.getOOM()
			return 0, NeedMore
		case keysFlashOOM:
			s.getError(rFlashGetOOM)
			return 0, NeedMore
		}
		if !s.chargeKey() {
			s.getOOM()
			return 0, NeedMore
		}
		s.getError(rBadGetKey)
		return 0, NeedMore
	}
	if at := s.serveKeys(line, from, withCAS, touch, exptime); at >= 0 {
		s.get.multiget = multigetState{active: true, withCAS: withCAS, touch: touch, exptime: exptime, left: len(line) - at}
		return at, s.env.paused()
	}
	return 0, NeedMore
}

// firstBadKey returns the offset of the first key of a retrieval's line,
// from token first on, that validKey refuses, or -1. The tokenizer's spans
// cover every key of a line short of maxTokens; a longer multiget's keys
// are scanned.
func (s *Session) firstBadKey(line []byte, first, n int) int {
	if n < maxTokens {
		for _, t := range s.text.tokens[min(first, n):n] {
			if !validKey(line[t.start:t.end]) {
				return int(t.start)
			}
		}
		return -1
	}
	for k := int(s.text.tokens[first].start); ; {
		ks, ke := nextToken(line, k)
		if ks == len(line) {
			return -1
		}
		if !validKey(line[ks:ke]) {
			return ks
		}
		k = ke
	}
}

// fetchSilently looks up (and with touch, touches) every key of keys for
// the side effects alone: hit counts, the fetched bit, the LRU, a new TTL,
// prefix stats and the logs. Each key takes its response object first
// and a flash value its read's memory: -1 when all did, else
// keysOutOfMemory or keysFlashOOM for the first that found none (the keys
// after it were not looked up).
func (s *Session) fetchSilently(keys []byte, touch bool, exptime int32) int {
	note := func(v []byte, m store.Meta) { s.get.hitLen, s.get.hitFlags = len(v), m.Flags } // for the logs
	var fr store.FlashRead
	for i := 0; ; {
		ks, ke := nextToken(keys, i)
		if ks == len(keys) {
			return -1
		}
		if !s.chargeKey() {
			return keysOutOfMemory
		}
		before := s.env.lookupBefore(keys[ks:ke])
		var hit, onFlash bool
		if touch {
			hit, onFlash = s.env.Store.GetAndTouchFlash(keys[ks:ke], int64(exptime), note, &fr)
		} else {
			hit, onFlash = s.env.Store.GetFlash(keys[ks:ke], note, &fr)
		}
		if onFlash {
			// memcached starts the key's read, then drops its reply.
			if !fr.Drop() {
				fr.Refused(touch, false) // memcached counts nothing for it
				return keysFlashOOM
			}
			hit = true
			s.get.hitLen, s.get.hitFlags = fr.ValueLen(), fr.Meta().Flags
		}
		s.observeGet(keys[ks:ke], hit, before)
		i = ke
	}
}

// continueMultiget serves the rest of a paused multiget from the front of in
// and returns how many bytes it consumed.
func (s *Session) continueMultiget(in []byte) (int, Status) {
	m := s.get.multiget
	if m.open {
		return s.continueOpenMultiget(in)
	}
	nl := bytes.IndexByte(in, '\n')
	if nl < 0 || m.left > nl {
		// Only an engine that dropped its buffer gets here.
		s.get.multiget = multigetState{}
		return 0, NeedMore
	}
	if at := s.serveKeys(in[:m.left], 0, m.withCAS, m.touch, m.exptime); at >= 0 {
		s.get.multiget.left = m.left - at
		return at, s.env.paused()
	}
	s.get.multiget = multigetState{}
	return nl + 1, NeedMore
}

// serveKeys appends a VALUE block for every stored key of keys from offset i
// on, then END. If the output budget runs out first, it stops before a key
// and returns that key's offset (always past i), else -1. A value sent in
// pieces (continueSend) stops it too, after its key.
func (s *Session) serveKeys(keys []byte, i int, withCAS, touch bool, exptime int32) int {
	switch at := s.serveKeyRun(keys, i, withCAS, touch, exptime); {
	case at == keysOutOfMemory:
		s.getOOM()
		return -1
	case at == keysFlashOOM:
		s.getError(rFlashGetOOM)
		return -1
	case at >= 0:
		return at
	}
	// Not flushed: in memcached 1.6.45 a retrieval's replies wait, as
	// any command's, for the read buffer to run dry or an mn.
	s.out = append(s.out, rEnd...)
	if s.log.verbose {
		s.vlogLine('>', []byte("END"))
	}
	return -1
}

// getError answers a retrieval that fails at a key (a bad key, rBadGetKey,
// or no memory for its flash read, rFlashGetOOM) as memcached's
// process_get_command_err does: every reply not yet flushed goes, the
// earlier requests' as well as this one's values (conn_release_items), and
// the error takes one fresh object, or the connection closes without one.
func (s *Session) getError(msg string) {
	s.dropUnflushed()
	if !s.chargeReply() {
		s.mem.cut = true
		return
	}
	if s.log.verbose && msg == rBadGetKey {
		s.vlogLine('>', []byte("END")) // memcached ends the get first
	}
	s.reply(msg)
}

// chargeKey takes the response object of a retrieval's next key: the
// command's own covers its first key, each key past it needs one of its
// own, taken before its lookup, as memcached's resp_start.
func (s *Session) chargeKey() bool {
	if s.mem.keyPaid {
		s.mem.keyPaid = false
		return true
	}
	return s.chargeReply()
}

// keysOutOfMemory is serveKeyRun's answer when a key found no response
// object (connmem.go): the multiget ends in getOOM. keysFlashOOM: a key's
// flash read found no memory (store.FlashRead.Start); it ends in
// rFlashGetOOM.
const (
	keysOutOfMemory = -2
	keysFlashOOM    = -3
)

// serveKeyRun is serveKeys without the END: part of a line. It returns -1
// once every key is served, the offset of the key to resume at when it
// paused, or keysOutOfMemory.
func (s *Session) serveKeyRun(keys []byte, i int, withCAS, touch bool, exptime int32) int {
	s.get.withCAS = withCAS
	st := s.env.Store
	served := false
	// Checked once per line: logging and prefix stats are nearly always off.
	observe := s.log.verbose || s.env.watching() != 0 || s.env.detailEnabled()
	for {
		ks, ke := nextToken(keys, i)
		if ks == len(keys) {
			break
		}
		if served && len(s.out)-s.outStart >= OutputBudget {
			return ks
		}
		if !s.chargeKey() {
			return keysOutOfMemory
		}
		key := keys[ks:ke]
		s.get.key = key
		var before store.Presence
		if observe {
			before = s.env.lookupBefore(key)
		}
		var hit, onFlash bool
		switch {
		case touch:
			if hit, onFlash = st.GetAndTouchFlash(key, int64(exptime), s.get.emitFn, s.flashRead()); hit && !onFlash {
				s.heldHit(key)
			}
		default:
			h := s.hashKey(key)
			if hit, onFlash = st.GetFlashHashed(key, h, s.get.emitFn, s.flashRead()); hit && !onFlash {
				s.held.note(h) // the VALUE reply holds the item until written (held.go)
			}
		}
		if onFlash {
			if !s.startFlash(withCAS, observe) {
				s.flashRead().Refused(touch, false) // memcached counts nothing for it
				return keysFlashOOM
			}
			return ke
		}
		if observe {
			s.observeGet(key, hit, before)
		}
		served = true
		i = ke
		if s.send.active {
			return ke
		}
	}
	return -1
}

// lookupBefore is, while someone watches fetchers, what a retrieval of key
// is about to find: a miss's log line says whether the item was absent,
// flushed or expired, which the lookup itself forgets as it unlinks a dead
// item. Absent when nobody watches.
func (e *Env) lookupBefore(key []byte) store.Presence {
	if e.watching()&logFetchers == 0 {
		return store.Absent
	}
	return e.Store.Peek(key).Presence
}

// observeGet reports one key of a retrieval to -vv, watch and stats detail;
// before is lookupBefore's answer for it.
func (s *Session) observeGet(key []byte, hit bool, before store.Presence) {
	if s.log.verbose && hit {
		s.vlogLine('>', append([]byte("sending key "), key...))
	}
	if s.env.watching()&logFetchers != 0 {
		p := store.Present
		if !hit {
			p = before
			if p == store.Present { // gone between the peek and the lookup
				p = store.Absent
			}
		}
		s.logGet(key, p, s.env.Store.ItemClass(len(key), s.get.hitLen, s.get.hitFlags), s.get.hitLen)
	}
	if s.env.detailEnabled() {
		s.env.recordPrefix(key, 'g', hit)
	}
}

// emitValue writes one VALUE block; it is the store's Get callback.
func (s *Session) emitValue(value []byte, m store.Meta) {
	s.get.hitLen, s.get.hitFlags = len(value), m.Flags
	b := s.replyRoom(s.out, len(valuePrefix)+len(s.get.key)+64+min(len(value), valueChunk))
	b = append(b, valuePrefix...)
	b = append(b, s.get.key...)
	b = append(b, ' ')
	b = appendDecimal(b, uint64(m.Flags))
	b = append(b, ' ')
	b = appendDecimal(b, uint64(len(value)))
	if s.get.withCAS {
		b = append(b, ' ')
		b = strconv.AppendUint(b, m.CAS, 10)
	}
	b = append(b, crlf...)
	if s.pinsValue(len(value)) {
		// A value read from flash is not the store's to pin: it goes whole.
		if ref := s.env.Store.RefOf(s.get.key, value); ref.Len() == len(value) {
			s.out = s.startSend(b, value, ref, true)
			return
		}
	}
	b = append(b, value...)
	s.out = append(b, crlf...)
}
