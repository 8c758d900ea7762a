package reactor

// Kickable reports whether -o idle_timeout may close a connection whose
// clock has run out: as memcached's connection-timeout thread, which kicks
// only connections waiting for a command (conn_new_cmd, conn_read), never
// one partway through a value whose size it knows (conn_nread: a slow
// client's set would lose its value) nor a watch or metadump stream. One
// rule for every engine.
// A Session that knows more (protocol.Session.IdleKickable: its Want may
// be for the rest of a long command line, which memcached kicks) says so.
func Kickable(s Session) bool {
	if s == nil {
		return true
	}
	if k, ok := s.(interface{ IdleKickable() bool }); ok {
		return k.IdleKickable()
	}
	return s.Want() <= 0 && !s.Pending()
}

// CloseReasonIdle and CloseReasonError are what `watch connevents` says of
// a connection closed by -o idle_timeout and by a socket error (a reset),
// as memcached says them.
const (
	CloseReasonIdle  = "idle_timeout"
	CloseReasonError = "error"
)

// NoteClose tells s why the engine is closing its connection, for `watch
// connevents` (protocol.Session's ClosedBy); a Session without the method
// is left alone.
func NoteClose(s Session, reason string) {
	if c, ok := s.(interface{ ClosedBy(reason string) }); ok {
		c.ClosedBy(reason)
	}
}
