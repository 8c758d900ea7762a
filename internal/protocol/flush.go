package protocol

// flush runs flush_all with a delay (0 or more; text and binary alike):
// an absolute time at or before memcached's process_started (its start
// minus 62 s) makes its oldest_live 0, so nothing is flushed and a pending
// delayed flush is cancelled; any other delay flushes (store.FlushAll). It
// records memcached's oldest_live, which `stats settings` shows as oldest:
// the flush's time in memcached's relative clock, less one second with CAS
// on (memcached's CAS cutoff makes the flush exact).
func (e *Env) flush(delay int64) {
	st := e.Store
	now := e.relTime(st.Now())
	oldest := now
	switch {
	case delay > maxRelativeExptime:
		oldest = e.relTime(delay)
	case delay > 0:
		oldest = now + delay
	}
	if set := e.Settings; set == nil || set.CASEnabled {
		oldest--
	}
	e.oldestLive.Store(oldest)
	if delay > maxRelativeExptime && delay <= e.StartUnix-processStartedSlack {
		st.CancelFlush()
		return
	}
	st.FlushAll(delay)
}
