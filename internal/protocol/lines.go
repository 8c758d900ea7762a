package protocol

import "bytes"

// Finding where a request line ends: memcached's limits on a line's length,
// and the retrieval lines it reads however long they are.

// multigetLimit bounds what a retrieval line may buffer. A get/gets line
// is buffered whole up to max(64 KiB, min(-I, 1 MiB)), past which it is
// served as it arrives (retrieve_open.go); a gat/gats line is refused past
// 64 KiB, where memcached closes one longer than 2048 bytes that arrives
// without its newline. Neither grows with -I beyond 1 MiB: a client's
// unfinished line costs at most that, not -I (128 MB under -I 128m).
func (e *Env) multigetLimit(line []byte) int {
	n := minMultigetLen
	if !isGetLine(line) {
		return n
	}
	if st := e.Settings; st != nil && st.ItemSizeMax > n {
		n = min(st.ItemSizeMax, maxWholeGetLine)
	}
	return n
}

// maxWholeGetLine is the longest get/gets line buffered whole.
const maxWholeGetLine = 1 << 20

// lineEnd returns the index of the '\n' ending the first line of avail, or -1
// with the status to return: NeedMore while the line may still be completed,
// Close when it is longer than memcached allows; or openLine for a retrieval
// line past the multiget bound, served as it arrives. The decision depends only on
// the line's own bytes, never on how much of it has arrived.
func (s *Session) lineEnd(avail []byte) (int, Status) {
	from := min(s.input.scanned, len(avail))
	if i := indexNewline(avail, from, MaxLineLen+1); i >= 0 {
		return i, NeedMore
	}
	if len(avail) <= MaxLineLen {
		return -1, NeedMore
	}
	if s.conn.datagramID != 0 {
		// A datagram arrives whole and memcached reads it in one go, so it
		// always meets a long line's newline and serves the line whatever
		// its length; only a datagram without one is dropped.
		if i := indexNewline(avail, max(from, MaxLineLen+1), len(avail)); i >= 0 {
			return i, NeedMore
		}
	}
	if !isMultiget(avail) {
		// memcached closes silently: nothing sane can follow such a line.
		// Its close culls the replies it has not flushed (conn_release_items).
		s.dropUnflushed()
		return -1, Close
	}
	limit := s.env.multigetLimit(avail)
	if i := indexNewline(avail, max(from, MaxLineLen+1), limit+1); i >= 0 {
		return i, NeedMore
	}
	if len(avail) > limit {
		if isGetLine(avail) {
			// memcached buffers it whole, without bound; it is served
			// as it arrives instead (retrieve_open.go).
			return openLine, NeedMore
		}
		// Beyond memcached, which closes a long gat at once.
		s.out = append(s.out, "CLIENT_ERROR line too long\r\n"...)
		return -1, Close
	}
	// The buffer doubles: the want steps through powers of two, so an
	// engine reallocates it a few times in all. A want of exactly twice
	// what has come moved with every read, and io_uring's 16 KiB reads
	// then had the whole line copied into a new buffer each time
	// (quadratic: a 100 MB line under -I 128m took 36 s of CPU).
	w := 2 * MaxLineLen
	for w < 2*len(avail) {
		w *= 2
	}
	s.input.want = min(limit+1, w)
	s.input.wantLine = true // still a command line: idle_timeout may kick it (IdleKickable)
	return -1, NeedMore
}

// indexNewline returns the index of the first '\n' in b[from:end] (end is
// capped at len(b)), or -1.
func indexNewline(b []byte, from, end int) int {
	end = min(end, len(b))
	if from >= end {
		return -1
	}
	if i := bytes.IndexByte(b[from:end], '\n'); i >= 0 {
		return from + i
	}
	return -1
}

// isMultiget reports whether a long line is a retrieval command, the one kind
// memcached lets grow past MaxLineLen.
func isMultiget(b []byte) bool {
	b = trimSeps(b)
	return isGetLine(b) || bytes.HasPrefix(b, []byte("gat ")) || bytes.HasPrefix(b, []byte("gats "))
}

// isGetLine reports whether b starts a get or gets line, the ones memcached
// reads however long they are.
func isGetLine(b []byte) bool {
	b = trimSeps(b)
	return bytes.HasPrefix(b, []byte("get ")) || bytes.HasPrefix(b, []byte("gets "))
}

func trimSeps(b []byte) []byte {
	i := 0
	for i < len(b) && isSep(b[i]) {
		i++
	}
	return b[i:]
}
