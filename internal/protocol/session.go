package protocol

// Session is the per-connection protocol state: it parses the memcached text
// protocol from byte slices the engine hands it and appends replies to the
// engine's output buffer. It does no I/O and is used by one goroutine at a time.
type Session struct {
	env *Env
	// TODO(protocol owner): parser state (swallow counter for oversized values, ...).
}

// NewSession returns a Session bound to env.
func NewSession(env *Env) *Session { return &Session{env: env} }

// Reset prepares the Session for a new connection.
func (s *Session) Reset() {}

// Process handles the complete requests at the front of in (at most
// Settings.ReqsPerEvent of them), appending their replies to out. It returns how
// many bytes of in were consumed, the extended out, and what to do next. in may
// end in the middle of a request: those bytes are left unconsumed (or, for the
// data of an oversized value, consumed and dropped) until more arrive.
func (s *Session) Process(in, out []byte) (consumed int, reply []byte, st Status) {
	panic("protocol: Process not implemented yet")
}

// Want reports the buffer size the first unconsumed request needs in total
// (command line plus data block) once known, or 0. Engines grow their read
// buffer to at least this many bytes.
func (s *Session) Want() int { return 0 }
