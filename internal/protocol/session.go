package protocol

// MaxLineLen is the longest command line (without its '\n') memcached accepts
// unless it is a multiget: a longer line closes the connection. Engines must
// be able to hold at least MaxLineLen+1 unconsumed bytes.
const MaxLineLen = 2048

// minMultigetLen is the floor of the multiget line bound (multigetLimit),
// and a gat/gats line's bound.
const minMultigetLen = 64 << 10

// defaultReqsPerEvent is memcached's -R default.
const defaultReqsPerEvent = 20

// Session is the per-connection protocol state: it parses memcached's text,
// meta and binary protocols from byte slices the engine hands it and appends
// replies to the engine's output buffer. It does no I/O and is used by one
// goroutine at a time.
//
// A Session is nearly stateless between calls: a request whose data block has
// not fully arrived is left unconsumed and parsed again on the next call, so
// replies never depend on how the input was split. What it does carry is
// held by one state type per concern, each in its feature's file with its
// own reset; the fields below that are not such a state are the Process
// call's own.
type Session struct {
	env  *Env
	conn connInfo  // the connection served: ids, peer, protocol, close reason (conn.go)
	mem  connMem   // its read buffer and response objects in its worker's pool (connmem.go)
	auth authState // the client's login, SASL or -Y (auth_state.go)

	// The request being answered, per protocol.
	input inputState  // what the unconsumed input needs first (input_state.go)
	text  textCommand // a text command line's tokens (tokens.go)
	get   getState    // a retrieval, or a multiget left unfinished (retrieve_state.go)
	meta  metaState   // a meta command (meta_state.go)
	bin   binaryState // a binary request (binary_state.go)

	// Work that spans calls: a large value going out in pieces (budget.go)
	// or coming in, into a store reservation (recv.go), and a metadump or
	// watch the connection was handed to (stream_state.go).
	send   sendState
	refs   refBatch // large values left to the engine to send from the store (byref.go)
	recv   recvState
	flash  flashState // a value being read from flash (flash.go)
	stream streamState
	log    logState   // how -vv and watch lines are written (verbose.go)
	debug  debugState // what `debugitem` holds (debugitem.go)

	prefetched prefetchedKeys // the hashes the input's prefetch took (prefetch.go)
	held       heldItems      // keys of hits whose replies are not yet written (held.go)

	// The Process call's own: the reply buffer being extended, the one the
	// engine passed in (replyRoom gives back only the pooled buffers it took
	// itself), and len(out) when the call began and after the last reply
	// memcached would have flushed.
	out       []byte
	outIn     []byte
	outStart  int
	flushMark int
	// budgetStop: this call stopped before a request for want of output
	// budget, which another call continues (Pending).
	budgetStop bool
	// culls counts errors that took back replies not yet flushed
	// (dropUnflushed). What they take depends on where the reads ended, so
	// the tests that cut an input at every byte expect the same replies
	// only when there were none.
	culls int
}

// NewSession returns a Session bound to env.
func NewSession(env *Env) *Session {
	s := &Session{env: env}
	s.get.bind(s)
	s.meta.bind(s)
	s.bin.bind(s)
	s.stream.bind(s)
	return s
}

// Pending reports whether the Session has output to produce without more
// input: a value being sent in pieces, requests or multiget keys left
// unstarted because the call's output reached OutputBudget, a metadump not
// yet finished, or a connection turned into a `watch` log stream. An engine
// that sets Env.ResumesPending calls Process again, with its unconsumed
// input (possibly none), once it has sent the replies, for as long as
// Pending holds; a call that then consumes and produces nothing is a
// watcher with nothing to say, which it may leave until its wakeup.
func (s *Session) Pending() bool {
	if s.refs.handed {
		return false // nothing more before the engine has sent the values (byref.go)
	}
	return s.flashReady() || s.stream.active() || s.send.active || s.budgetStop ||
		s.get.multiget.active && !s.get.multiget.hungry && s.env.ResumesPending
}

// Reset prepares the Session for a new connection.
func (s *Session) Reset() {
	s.logClosed()
	s.endDump() // a client gone mid-dump frees the crawler
	s.conn.reset()
	s.log.reset()
	s.bin.reset()
	s.auth.reset()
	s.input.reset()
	s.get.reset()
	s.endSend()
	s.releaseRefs()
	s.endRecv()
	s.endMem()
	s.endDebug()
	s.budgetStop = false
	s.resetFlash()
	s.out = nil
	s.text.reset()
	s.meta.reset()
}

// Want reports the buffer size the first unconsumed request needs in total
// (command line plus data block) once known, or 0. Engines grow their read
// buffer to at least this many bytes.
func (s *Session) Want() int { return s.input.want }

// IdleKickable reports whether -o idle_timeout may close the connection
// now: it waits for a command, or for the rest of a command line (a long
// get line dripped a byte at a time, which memcached's conn_read state
// kicks too), not for a value whose size it knows (Want) nor with output
// pending (a large value in pieces, metadump, watch).
func (s *Session) IdleKickable() bool {
	return (s.input.want <= 0 || s.input.wantLine) && !s.Pending()
}

// ReadingData reports whether the Session waits for the rest of a request
// whose size it knows (a value, a binary request's extras, key and body),
// which memcached reads in its conn_nread state (reactor.IdleState).
func (s *Session) ReadingData() bool { return s.input.want > 0 && !s.input.wantLine }

// Watching reports whether the connection has become a `watch` stream
// (memcached's conn_watch).
func (s *Session) Watching() bool { return s.stream.watch != nil }

// reqsPerEvent is how many requests one Process call starts (-R).
func (e *Env) reqsPerEvent() int {
	if st := e.Settings; st != nil && st.ReqsPerEvent > 0 {
		return st.ReqsPerEvent
	}
	return defaultReqsPerEvent
}

// Process handles the complete requests at the front of in (at most
// Settings.ReqsPerEvent of them), appending their replies to out. It returns how
// many bytes of in were consumed, the extended out, and what to do next. in may
// end in the middle of a request: those bytes are left unconsumed (or, for the
// data of an oversized value, consumed and dropped) until more arrive.
func (s *Session) Process(in, out []byte) (consumed int, reply []byte, st Status) {
	s.out, s.outIn = out, out
	s.outStart = len(out)
	s.flushMark = len(out)
	s.held.release() // the replies of earlier calls are written
	s.input.startCall()
	s.budgetStop = false
	s.log.verbose = s.env.verboseOn()
	s.mem.startCall()
	if len(in) > 0 && !s.takeReadBuf() {
		s.conn.closeReason = "error"
		s.out, s.outIn = nil, nil
		return 0, out, Close
	}
	pos, st := s.process(in)
	if s.conn.datagramID != 0 && (s.mem.waiting || s.recv.active) {
		// A datagram that ends inside a data block: memcached holds the
		// replies before it until the next datagram brings the rest, from
		// whichever client sends one; a datagram is served alone here.
		s.dropUnflushed()
	}
	// The engine sends the replies now; a storage command waiting for
	// the rest of its value keeps its object.
	s.endCall(s.mem.waiting || s.recv.active)
	if pos == len(in) {
		s.mem.releaseReadBuf()
	}
	if st == Close {
		s.conn.closing()
	}
	reply = s.out
	s.out, s.outIn = nil, nil
	// Drop references into the engine's buffer so it can be reused or freed.
	s.get.endCall()
	s.meta.endCall()
	s.bin.endCall()
	return pos, reply, st
}

func (s *Session) process(in []byte) (int, Status) {
	if s.refs.handed {
		return 0, NeedMore // the engine calls again once it has sent the values (RefSent)
	}
	pos := 0
	reqs := 0
	limit := s.env.reqsPerEvent()
	// A value whose first pieces went out in an earlier call cannot be
	// taken back: an error later in this call drops only what follows it.
	spanning := s.send.active
	prefetchedTo := 0 // in up to here has been offered to Store.Prefetch (prefetch.go)
	s.prefetched.n = 0
	for {
		if s.mem.cut {
			return pos, Close
		}
		if s.flash.active {
			if !s.flash.w.done.Load() {
				return pos, NeedMore // the read's wakeup brings the engine back
			}
			s.finishFlash()
			continue
		}
		if s.stream.watch != nil {
			// memcached stops reading a watcher's socket: input is dropped.
			s.drainWatch()
			return len(in), NeedMore
		}
		if s.stream.dump != nil {
			s.continueDump()
			if s.stream.dump != nil {
				return pos, NeedMore // Pending brings the engine back
			}
			continue
		}
		if s.send.active {
			if st := s.continueSend(); st == Close || s.send.active {
				return pos, st
			}
			if spanning {
				spanning = false
				s.flushMark = len(s.out)
				s.held.release()
			}
			continue
		}
		if s.recv.active {
			// A value whose line came in an earlier call: memcached
			// flushes after it, as after any data read on directly.
			s.mem.resumed = s.mem.resumed || s.mem.carried
			n, st := s.continueRecv(in[pos:])
			pos += n
			if st == Close || s.recv.active {
				return pos, st
			}
			s.endResumed()
			reqs++
			continue
		}
		if s.input.swallow > 0 {
			pos += s.input.swallowFrom(in[pos:])
			if s.input.swallow > 0 {
				return pos, NeedMore
			}
		}
		if pos == len(in) {
			return pos, NeedMore
		}
		if s.overBudget() {
			s.budgetStop = !s.get.multiget.active // a paused multiget is Pending anyway
			return pos, NeedMore
		}
		if s.get.multiget.active {
			n, st := s.continueMultiget(in[pos:])
			pos += n
			if s.mem.cut {
				return pos, Close
			}
			if st == Yield {
				return pos, Yield
			}
			if s.get.multiget.hungry { // an open line waiting for more of itself
				return pos, NeedMore
			}
			if s.get.multiget.active { // paused again: a value in pieces, or the budget
				continue
			}
			reqs++
			continue
		}
		if reqs >= limit {
			return pos, Yield
		}
		if s.conn.proto == protoUndecided {
			if s.env.ASCIIAuth != nil {
				// memcached reads every -Y connection as its text login
				// and then as text: there is no binary protocol to reach
				// around the login.
				s.conn.proto = protoText
			} else {
				s.negotiate(in[pos])
			}
		}
		if s.conn.proto == protoBinary {
			charged := len(in)-pos >= binaryHeaderLen
			if charged && !s.chargeCommand() {
				return pos, s.outOfReplies()
			}
			n, st := s.binaryRequest(in[pos:])
			if n < 0 {
				s.input.want = -n
				s.input.wantLine = s.input.wantLine || !charged
				s.mem.waiting = charged // a header still arriving holds no object
				return pos, st
			}
			if charged && !s.recv.active {
				s.endResumed()
			}
			s.bin.endRequest()
			pos += n
			reqs++
			if st == Close {
				return pos, Close
			}
			continue
		}
		if s.env.ASCIIAuth != nil && !s.auth.textPassed {
			if !s.chargeCommand() {
				return pos, s.outOfReplies()
			}
			n, st := s.asciiAuth(in[pos:])
			if n < 0 {
				s.input.want = -n
				s.mem.waiting = true
				return pos, st
			}
			s.endResumed()
			pos += n
			reqs++
			if st == Close {
				return pos, Close
			}
			continue
		}
		avail := in[pos:]
		n, st := s.lineEnd(avail)
		if n == openLine {
			if !s.chargeCommand() {
				return pos, s.outOfReplies()
			}
			pos += s.openMultiget(avail)
			s.input.scanned = 0
			continue
		}
		if n < 0 {
			if st == NeedMore {
				s.input.scanned = len(avail)
			}
			return pos, st
		}
		s.input.scanned = 0
		line := avail[:n]
		if n > 1 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		// A NUL is a byte like any other in memcached 1.6.45 (1.6.18
		// ended the line before).
		next := pos + n + 1
		if pos >= prefetchedTo && next < len(in) {
			// More lines follow this one: their gets can overlap.
			prefetchedTo = pos + s.prefetchGets(avail, limit-reqs)
		}
		if s.log.verbose {
			s.vlogLine('<', line)
		}
		if !s.chargeCommand() {
			return pos, s.outOfReplies()
		}
		data, st := 0, NeedMore
		if n+1 < minCommandLen {
			// memcached's parser (1.6.45) refuses a line this short,
			// terminator included, before looking at it: a blank line, a
			// lone character, "mn\n".
			s.text.noreply = false
			s.reply(rBadFormat)
		} else {
			data, st = s.execute(line, in[next:])
		}
		if st == Yield {
			// A multiget paused: data is how much of its line was served.
			return pos + data, Yield
		}
		if s.get.multiget.active {
			// Paused without yielding (ResumesPending): what stopped it, a
			// value in pieces or the budget, is handled at the loop's top.
			pos += data
			continue
		}
		if data < 0 {
			// A storage command whose data block is still incomplete.
			s.input.want = n + 1 - data
			s.mem.waiting = true
			return pos, NeedMore
		}
		if !s.recv.active {
			s.endResumed()
		}
		pos = next + data
		reqs++
		if st == Close {
			return pos, Close
		}
	}
}

// outOfReplies is the end of a connection whose next command found no
// response object: memcached closes it without sending what it stacked
// since its last flush.
func (s *Session) outOfReplies() Status {
	s.dropUnflushed()
	return Close
}

// reply appends msg (which carries its own "\r\n") unless the command asked
// for noreply. Like memcached, noreply silences errors too.
func (s *Session) reply(msg string) {
	if s.text.noreply {
		if s.log.verbose {
			s.vlogLine('>', []byte("NOREPLY "+msg[:len(msg)-2]))
		}
		return
	}
	s.out = append(s.out, msg...)
	if s.log.verbose {
		s.vlogLine('>', []byte(msg[:len(msg)-2]))
	}
}

// hasPendingReplies reports whether replies of earlier commands are still
// queued in the sense memcached's watch and metadump check (resp_has_stack):
// memcached flushes after a retrieval command, so only replies since the
// last one count.
func (s *Session) hasPendingReplies() bool { return len(s.out) > s.flushMark }
