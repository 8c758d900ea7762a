package protocol

import (
	"bytes"

	"github.com/gocached/gocached/internal/store"
)

// A get or gets line longer than the multiget bound (multigetLimit) is
// served as it arrives rather than whole: each key is looked up once it is
// complete (a space follows it) and its bytes are consumed, until the
// line's end turns what is left into an ordinary multiget (retrieve.go).
// memcached buffers such a line whole, without bound (a pylibmc get_multi
// of 4,500 keys of 240 bytes is 1.1 MB, past -I 1m); serving it in passing
// keeps a connection's input within the bound and gives memcached's
// replies, with one difference: a bad key met after values have gone out
// is answered after them, where memcached, which sees the whole line
// first, drops them and sends the error alone. After an error the rest of
// the line is read and dropped. (gat and gats lines past the bound are
// refused: memcached closes any gat line over 2048 bytes that arrives
// without its newline.)

// openLine is lineEnd's answer for a line to be served as it arrives.
const openLine = -2

// openMultiget starts serving the over-long get or gets line at the front
// of avail: it consumes the command and leaves the keys to
// continueOpenMultiget.
func (s *Session) openMultiget(avail []byte) int {
	cs, ce := nextToken(avail, 0)
	s.get.multiget = multigetState{active: true, open: true, withCAS: string(avail[cs:ce]) == "gets"}
	s.text.noreply = false // as execute does for every other line: the last command's must not silence this one's errors
	if s.log.verbose {
		s.vlogLine('<', avail[:ce]) // the command; memcached echoes the whole line
	}
	return ce
}

// continueOpenMultiget serves the complete keys at the front of in and
// returns how many bytes it consumed: up to the line's end once it has
// arrived, else up to the last complete key, with get.multiget.hungry set.
func (s *Session) continueOpenMultiget(in []byte) (int, Status) {
	m := &s.get.multiget
	m.hungry = false
	nl := bytes.IndexByte(in, '\n')
	if m.skip {
		if nl < 0 {
			m.hungry = true
			return len(in), NeedMore
		}
		s.get.multiget = multigetState{}
		return nl + 1, NeedMore
	}
	chunk, ended := openChunk(in, nl)
	if !ended && len(chunk) == 0 {
		partial := in
		if n := len(partial); n > 0 && partial[n-1] == '\r' {
			partial = partial[:n-1] // perhaps the line's end, its '\n' still to come
		}
		if len(partial) > store.MaxKeyLen { // a key too long to be one, still arriving
			s.openError(rBadGetKey)
			return len(in), NeedMore
		}
		m.hungry = true
		return 0, NeedMore
	}
	bad := -1
	for k := 0; ; {
		ks, ke := nextToken(chunk, k)
		if ks == len(chunk) {
			break
		}
		if !validKey(chunk[ks:ke]) {
			bad = ks
			break
		}
		m.keys = true
		k = ke
	}
	keys := chunk
	if bad >= 0 {
		keys = chunk[:bad]
	}
	switch at := s.serveKeyRun(keys, 0, m.withCAS, m.touch, m.exptime); {
	case at == keysOutOfMemory || at == keysFlashOOM:
		if at == keysFlashOOM {
			s.getError(rFlashGetOOM)
		} else {
			s.getOOM()
		}
		m.skip = true
		if nl >= 0 {
			s.get.multiget = multigetState{}
			return nl + 1, NeedMore
		}
		m.hungry = true
		return len(in), NeedMore
	case at >= 0:
		return at, s.env.paused()
	}
	switch {
	case bad >= 0:
		if s.log.verbose {
			s.vlogLine('>', []byte("END")) // memcached ends the get first
		}
		s.openError(rBadGetKey)
		if nl >= 0 {
			s.get.multiget = multigetState{}
			return nl + 1, NeedMore
		}
		return len(in), NeedMore
	case !ended:
		m.hungry = true
		return len(chunk), NeedMore
	}
	if m.keys {
		s.out = append(s.out, rEnd...)
		if s.log.verbose {
			s.vlogLine('>', []byte("END"))
		}
		s.markFlushed()
	} else {
		s.reply(rBadFormat) // a line of the command alone, as memcached 1.6.40 on answers it
	}
	if nl < 0 { // a NUL ended the line: the rest up to its newline is dropped
		m.skip, m.hungry = true, true
		return len(in), NeedMore
	}
	s.get.multiget = multigetState{}
	return nl + 1, NeedMore
}

// openChunk is the part of in whose keys are complete: the line up to its
// end ('\n' at nl, less a '\r'; a NUL ends it first, as memcached reads a
// C string) when that has arrived (ended), else up to the last space.
func openChunk(in []byte, nl int) (chunk []byte, ended bool) {
	chunk = in
	if nl >= 0 {
		chunk, ended = in[:nl], true
		if n := len(chunk); n > 0 && chunk[n-1] == '\r' {
			chunk = chunk[:n-1]
		}
	}
	if z := bytes.IndexByte(chunk, 0); z >= 0 {
		return chunk[:z], true
	}
	if !ended {
		chunk = chunk[:bytes.LastIndexByte(chunk, ' ')+1]
	}
	return chunk, ended
}

// openError answers an error in an open line and drops the rest of it.
func (s *Session) openError(msg string) {
	s.reply(msg)
	s.markFlushed()
	s.get.multiget.skip, s.get.multiget.hungry = true, true
}
