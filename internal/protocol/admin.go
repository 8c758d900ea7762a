package protocol

import (
	"log/slog"

	"github.com/gocached/gocached/internal/store"
)

// The admin commands memcached 1.6.18 has beyond storage and retrieval:
// slabs, lru, cache_memlimit, shutdown and extstore (lru_crawler is in
// crawler.go, watch in watch.go). Token counts here are gocached's (real
// tokens); memcached's ntokens is one more.

const maxSlabClassID = 63 // memcached's MAX_NUMBER_OF_SLAB_CLASSES-1

// slabs answers `slabs reassign <src> <dst>` (the store's page mover) and
// `slabs automove ...`. Under -o no_slab_reassign (or no_modern) memcached
// refuses every reassign before it reads the class ids, and so does
// gocached.
func (s *Session) slabs(line []byte, n int) {
	switch {
	case n == 4 && string(s.text.token(line, 1)) == "reassign":
		if !s.env.Settings.tuning().SlabReassign {
			s.reply("CLIENT_ERROR slab reassignment disabled\r\n")
			return
		}
		src, ok1 := parseStrictInt32(s.text.token(line, 2)) // memcached 1.6.45's mc_tokto32
		dst, ok2 := parseStrictInt32(s.text.token(line, 3))
		if !ok1 || !ok2 {
			s.reply(rBadFormat)
			return
		}
		s.reply(reassignReplies[s.env.Store.Reassign(int(src), int(dst))])
	case n >= 3 && string(s.text.token(line, 1)) == "automove":
		s.text.setNoreply(line, n)
		s.slabsAutomove(line, n)
	default:
		s.reply(rError)
	}
}

// lru answers `lru tune|mode|temp_ttl ...`, recording the values for
// `stats settings`; temp_ttl also turns the store's TEMP LRU on or off.
// As in memcached, mode and temp_ttl need the LRU maintainer.
func (s *Session) lru(line []byte, n int) {
	if n < 2 {
		s.reply(rError)
		return
	}
	s.text.setNoreply(line, n)
	switch sub := string(s.text.token(line, 1)); {
	case sub == "tune" && n >= 6:
		hot, ok1 := parseStrictUint32(s.text.token(line, 2)) // mc_toktou32: no wrap, no '+'
		warm, ok2 := parseStrictUint32(s.text.token(line, 3))
		hotF, ok3 := parseDouble(s.text.token(line, 4))
		warmF, ok4 := parseDouble(s.text.token(line, 5))
		switch {
		case !ok1 || !ok2 || !ok3 || !ok4:
			s.reply(rError)
		case hot+warm > 80:
			s.reply("ERROR hot and warm pcts must not exceed 80\r\n")
		case warmF <= 0 || hotF <= 0:
			s.reply("ERROR hot/warm age factors must be greater than 0\r\n")
		default:
			s.env.adminUpdate(func(a *adminState) {
				a.hotPct, a.warmPct, a.hotFactor, a.warmFactor = hot, warm, hotF, warmF
			})
			s.env.syncLRU()
			s.reply(rOK)
		}
	case sub == "mode" && n >= 3 && !s.env.Settings.LRUMaintainerDisabled:
		switch string(s.text.token(line, 2)) {
		case "flat":
			s.env.adminUpdate(func(a *adminState) { a.segmented = false })
			s.env.syncLRU()
			s.reply(rOK)
		case "segmented":
			s.env.adminUpdate(func(a *adminState) { a.segmented = true })
			s.env.syncLRU()
			s.reply(rOK)
		default:
			s.reply(rError)
		}
	case sub == "temp_ttl" && n >= 3 && !s.env.Settings.LRUMaintainerDisabled:
		ttl, ok := parseStrictInt32(s.text.token(line, 2))
		if !ok {
			s.reply(rError)
			return
		}
		// The store keeps the setting: it decides which items are
		// temporary (never evicted) as they are stored.
		s.env.Store.SetTemporaryTTL(int64(ttl))
		s.reply(rOK)
	default:
		s.reply(rError)
	}
}

// cacheMemlimit resizes the store (`cache_memlimit <megabytes>`).
func (s *Session) cacheMemlimit(line []byte, n int) {
	if n != 2 && n != 3 {
		s.reply(rError)
		return
	}
	s.text.setNoreply(line, n)
	mb, ok := parseStrictUint32(s.text.token(line, 1)) // mcmc_token_get_u32
	switch {
	case !ok:
		s.reply(rError)
	case mb < 8:
		s.reply("MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n")
	case mb > 1000000000:
		s.reply("MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes\r\n")
	case s.env.Store.SetMemoryLimit(int64(mb)<<20) != nil:
		s.reply("MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\n")
	default:
		if s.env.verbosity() > 0 {
			slog.Info("maxbytes adjusted", "megabytes", mb)
		}
		s.reply(rOK)
	}
}

// shutdown runs `shutdown [graceful]`, which memcached allows only with -A.
func (s *Session) shutdown(line []byte, n int) Status {
	st := s.env.Settings
	if st == nil || !st.ShutdownEnabled {
		s.reply(rShutdownOff)
		return NeedMore
	}
	graceful := false
	switch {
	case n == 1:
	case n == 2 && string(s.text.token(line, 1)) == "graceful":
		graceful = true
	default:
		s.reply("CLIENT_ERROR invalid shutdown mode\r\n")
		return NeedMore
	}
	if s.env.Shutdown != nil {
		s.env.Shutdown(graceful)
	}
	// memcached closes the connection without a reply and stops.
	return Close
}

// verbosity is the current -v level.
func (e *Env) verbosity() int32 {
	if st := e.Settings; st != nil && st.Verbosity != nil {
		return st.Verbosity.Load()
	}
	return 0
}

// reassignReplies are memcached's answers to `slabs reassign`.
var reassignReplies = [...]string{
	store.ReassignOK:       "OK\r\n",
	store.ReassignBusy:     "BUSY currently processing reassign request\r\n",
	store.ReassignBadClass: "BADCLASS invalid src or dst class id\r\n",
	store.ReassignNoSpare:  "NOSPARE source class has no spare pages\r\n",
	store.ReassignSame:     "SAME src and dst class are identical\r\n",
}

// syncLRU hands the LRU's settings, as `lru tune` and `lru mode` left
// them, to the store.
func (e *Env) syncLRU() {
	a := e.adminSnapshot()
	e.Store.SetLRUTuning(a.hotPct, a.warmPct, a.hotFactor, a.warmFactor, !a.segmented)
}

// syncAutomove hands the automover's level and ratio, as `slabs automove`
// left them, to the store.
func (e *Env) syncAutomove() {
	a := e.adminSnapshot()
	e.Store.SetAutomove(a.automove, a.automoveRatio, int(a.automoveWindow))
}
