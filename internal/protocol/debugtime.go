package protocol

// debugTime is memcached-debug's `debugtime p|r|<seconds>`: pause the
// cache's clock, resume it, or move it by a signed number of seconds
// (memcached's safe_strtoll; a bad number is ERROR). The Session only
// dispatches here under Settings.DebugTime.
func (s *Session) debugTime(line []byte, n int) {
	if n < 2 {
		s.reply(rError)
		return
	}
	switch arg := s.text.token(line, 1); string(arg) {
	case "p":
		s.env.Store.PauseClock(true)
	case "r":
		s.env.Store.PauseClock(false)
	default:
		v, neg, ok := parseDigits(arg)
		if !ok || (!neg && v > 1<<63-1) || (neg && v > 1<<63) {
			s.reply(rError)
			return
		}
		delta := int64(v)
		if neg {
			delta = -delta
		}
		s.env.Store.ShiftClock(delta)
	}
	s.reply(rOK)
}
