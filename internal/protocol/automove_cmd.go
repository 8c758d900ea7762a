package protocol

// slabsAutomove answers `slabs automove <level>|ratio R|freeratio R|window N`
// as memcached 1.6.45's process_slabs_automove_command: the subcommand is
// matched as a prefix of each name in turn (its strncmp over the token's
// length), so `slabs automove w 5` sets the window. The window, in
// seconds, must be within [3, 1800]. Numbers are read as mcmc's u32
// tokens: digits only, within 32 bits.
func (s *Session) slabsAutomove(line []byte, n int) {
	sub := s.text.token(line, 2)
	switch {
	case prefixOf(sub, "ratio"), prefixOf(sub, "freeratio"):
		ratio, ok := 0.0, false
		if n >= 4 {
			ratio, ok = parseDouble(s.text.token(line, 3))
		}
		if !ok {
			s.reply(rError)
			return
		}
		free := !prefixOf(sub, "ratio")
		s.env.adminUpdate(func(a *adminState) {
			if free {
				a.automoveFree = ratio
			} else {
				a.automoveRatio = ratio
			}
		})
	case prefixOf(sub, "window"):
		window, ok := uint32(0), false
		if n >= 4 {
			window, ok = parseStrictUint32(s.text.token(line, 3))
		}
		switch {
		case !ok:
			s.reply(rBadFormat)
			return
		case window < minAutomoveWindow || window > maxAutomoveWindow:
			s.reply("CLIENT_ERROR automove window too low or too high\r\n")
			return
		}
		s.env.adminUpdate(func(a *adminState) { a.automoveWindow = window })
	default:
		level, ok := parseStrictUint32(sub)
		switch {
		case !ok:
			s.reply(rBadFormat)
			return
		case level > 2:
			s.reply(rError)
			return
		}
		s.env.adminUpdate(func(a *adminState) { a.automove = level })
	}
	s.env.syncAutomove()
	s.reply(rOK)
}

// memcached 1.6.45's bounds on `slabs automove window`.
const (
	minAutomoveWindow = 3
	maxAutomoveWindow = 1800
)

// prefixOf reports whether tok, non-empty, begins word (memcached's
// strncmp(tok, word, len(tok)) == 0).
func prefixOf(tok []byte, word string) bool {
	return len(tok) > 0 && len(tok) <= len(word) && word[:len(tok)] == string(tok)
}
