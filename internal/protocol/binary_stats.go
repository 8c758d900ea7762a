package protocol

import "bytes"

// The binary STAT command: one response per statistic (key = name, value =
// value) and an empty one to end the list. The lines come from the same
// writers as the text `stats`, so the two protocols cannot disagree.

func (s *Session) binStats(group []byte) {
	if s.log.verbose {
		s.vlogBinCommand("STATS", group, "")
	}
	w := statWriter{b: s.bin.statLines[:0]}
	switch {
	case len(group) == 0:
		w.b = s.env.appendGeneralStats(w.b)
	case bytes.HasPrefix(group, []byte("reset")):
		// memcached matches the groups above by prefix, these below exactly.
		s.env.resetStats()
	case bytes.HasPrefix(group, []byte("settings")):
		s.env.appendSettings(&w)
	case bytes.HasPrefix(group, []byte("detail")):
		// The per-prefix stats of detail.go: the dump is one response whose
		// value is the text protocol's PREFIX lines and END. -X refuses
		// them (memcached 1.6.45, aa35238).
		if st := s.env.Settings; st != nil && st.DumpDisabled {
			s.binError(&s.bin.header, statusKeyNotFound)
			return
		}
		switch sub := group[len("detail"):]; {
		case bytes.HasPrefix(sub, []byte(" dump")):
			const name = "detailed"
			dump := s.env.appendDetailDump(nil)
			s.out = appendBinHeader(s.out, s.bin.header.opcode, statusOK, 0, uint16(len(name)), uint32(len(name)+len(dump)), s.bin.header.opaque, 0)
			s.out = append(s.out, name...)
			s.out = append(s.out, dump...)
		case bytes.HasPrefix(sub, []byte(" on")):
			s.env.detail.state.Store(detailOn)
		case bytes.HasPrefix(sub, []byte(" off")):
			s.env.detail.state.Store(detailOff)
		default:
			s.binError(&s.bin.header, statusKeyNotFound)
			return
		}
	case string(group) == "items":
		appendItems(&w, s.env.Store.Classes(), s.env.tempLRU(), !s.env.Settings.LRUMaintainerDisabled)
	case string(group) == "slabs":
		appendSlabs(&w, s.env.Store.Classes(), s.env.Store.Stats())
	case string(group) == "sizes":
		appendSizes(&w, s.env.Store)
	default:
		// Groups only an engine knows (gocached's extensions); memcached's
		// binary protocol has no "conns".
		if string(group) == "conns" || s.env.Server == nil || !s.env.Server.GroupStats(string(group), w.str) {
			s.binError(&s.bin.header, statusKeyNotFound)
			return
		}
	}
	s.bin.statLines = w.b
	s.appendBinStatLines(w.b)
	s.out = appendBinHeader(s.out, s.bin.header.opcode, statusOK, 0, 0, 0, s.bin.header.opaque, 0)
}

// appendBinStatLines sends each "STAT name value" line of lines as one
// binary response (key = name, value = value).
func (s *Session) appendBinStatLines(lines []byte) {
	for rest := lines; len(rest) > 0; {
		nl := bytes.Index(rest, []byte(crlf))
		if nl < 0 {
			break
		}
		line := bytes.TrimPrefix(rest[:nl], []byte("STAT "))
		rest = rest[nl+2:]
		name, value, _ := bytes.Cut(line, []byte(" "))
		s.out = appendBinHeader(s.out, s.bin.header.opcode, statusOK, 0, uint16(len(name)), uint32(len(name)+len(value)), s.bin.header.opaque, 0)
		s.out = append(s.out, name...)
		s.out = append(s.out, value...)
	}
}
