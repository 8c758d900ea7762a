package protocol

import "strconv"

// memcached's -vv lines, written to Env.VerboseLog: "<fd command line" for
// every text command, ">fd reply" for each one-line reply, ">fd sending key
// k" per value a get returns and ">fd END" after them, and
// "<fd new auto-negotiating client connection" / "<fd connection closed."
// around a connection (fd is the id the engine passed to Session.Opened).
// Multi-line replies (stats, metadump) are not echoed, as in memcached.
// While verbosity is below 2 the only cost is one atomic load per Process
// call.

// logState is what the -vv and watch lines of a Session are written with.
type logState struct {
	// verbose: -vv lines are wanted during this Process call.
	verbose bool
	// line is where a log line is rendered, reused.
	line []byte
}

// reset prepares the state for a new connection, dropping the line buffer
// a long key may have grown.
func (l *logState) reset() { l.line = nil }

// verboseOn reports whether -vv lines are wanted now.
func (e *Env) verboseOn() bool {
	return e.VerboseLog != nil && e.verbosity() >= 2
}

// vlogLine writes one line: dir ('<' or '>'), the connection id, a space, text.
func (s *Session) vlogLine(dir byte, text []byte) {
	b := append(s.log.line[:0], dir)
	b = strconv.AppendInt(b, int64(s.conn.id), 10)
	b = append(b, ' ')
	b = append(b, text...)
	b = append(b, '\n')
	s.log.line = b
	s.env.VerboseLog.Write(b) // best effort, as memcached's fprintf(stderr)
}

func (s *Session) vlogf(dir byte, text string) {
	s.vlogLine(dir, []byte(text))
}

// replyLogged appends msg (which carries its "\r\n") and, under -vv, logs
// it as memcached's out_string does, for replies that no noreply silences
// (mn, me's EN, stats reset, stats detail on|off).
func (s *Session) replyLogged(msg string) {
	s.out = append(s.out, msg...)
	if s.log.verbose {
		s.vlogLine('>', []byte(msg[:len(msg)-2]))
	}
}
