package protocol

import (
	"os"
	"strconv"
	"time"

	"github.com/gocached/gocached/internal/store"
)

// `stats` and its groups. Field names and order follow memcached 1.6.18, since
// monitoring tools (memcached_exporter among them) treat a missing field as a
// dead server. Fields for machinery gocached does not have report 0.

// statWriter appends "STAT name value\r\n" lines.
type statWriter struct{ b []byte }

func (w *statWriter) str(name, value string) {
	w.b = append(w.b, "STAT "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, value...)
	w.b = append(w.b, crlf...)
}

func (w *statWriter) uint(name string, v uint64) {
	w.b = append(w.b, "STAT "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = strconv.AppendUint(w.b, v, 10)
	w.b = append(w.b, crlf...)
}

func (w *statWriter) int(name string, v int64) {
	w.b = append(w.b, "STAT "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = strconv.AppendInt(w.b, v, 10)
	w.b = append(w.b, crlf...)
}

// classUint writes a per-class line such as "STAT items:1:number 5".
func (w *statWriter) classUint(prefix string, id int, name string, v uint64) {
	w.b = append(w.b, "STAT "...)
	w.b = append(w.b, prefix...)
	w.b = strconv.AppendInt(w.b, int64(id), 10)
	w.b = append(w.b, ':')
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = strconv.AppendUint(w.b, v, 10)
	w.b = append(w.b, crlf...)
}

func (w *statWriter) flag(name string, v bool) {
	if v {
		w.str(name, "yes")
	} else {
		w.str(name, "no")
	}
}

func boolNum(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// stats runs `stats [group ...]`.
func (s *Session) stats(line []byte, n int) {
	if n == 1 {
		s.out = s.env.appendGeneralStats(s.out)
		s.out = append(s.out, rEnd...)
		return
	}
	w := statWriter{b: s.out}
	switch group := s.text.token(line, 1); string(group) {
	case "reset":
		s.env.resetStats()
		s.replyLogged(rReset)
		return
	case "settings":
		s.env.appendSettings(&w)
	case "items":
		appendItems(&w, s.env.Store.Classes(), s.env.tempLRU(), !s.env.Settings.LRUMaintainerDisabled)
	case "slabs":
		appendSlabs(&w, s.env.Store.Classes(), s.env.Store.Stats())
	case "sizes":
		appendSizes(&w, s.env.Store)
	case "detail":
		s.statsDetail(line, n)
		return
	case "cachedump":
		s.cachedump(line, n)
		return
	case "extstore":
		// memcached built with extstore but running without it lists nothing.
		if fc := s.env.Store.Flash(); fc != nil && fc.Engine != nil {
			appendExtstorePages(&w, fc.Engine)
		}
	case "conns":
		// memcached always knows this group; without an engine it is empty.
		if s.env.Server != nil {
			s.env.Server.GroupStats("conns", w.str)
		}
	default:
		if s.env.Server == nil || !s.env.Server.GroupStats(string(group), w.str) {
			s.out = append(s.out, rError...)
			return
		}
	}
	s.out = append(w.b, rEnd...)
}

// resetStats clears every resettable counter (`stats reset`).
func (e *Env) resetStats() {
	e.Store.ResetStats()
	e.resetDetail()
	e.adminUpdate(func(a *adminState) { a.crawlerStarts = 0 })
	if e.Server != nil {
		e.Server.ResetStats()
	}
	e.counters.reset()
	e.mem.reset(e.Settings)
}

func (e *Env) serverStats() ServerStats {
	if e.Server == nil {
		return ServerStats{}
	}
	return e.Server.ServerStats()
}

func (e *Env) settings() Settings {
	if e.Settings == nil {
		return Settings{}
	}
	return *e.Settings
}

// appendGeneralStats writes the lines of a bare `stats`.
func (e *Env) appendGeneralStats(b []byte) []byte {
	w := statWriter{b: b}
	now := time.Now().Unix()
	set := e.settings()
	srv := e.serverStats()
	// The mover's counters are read first: a move seen ended must have
	// its evictions, counted as it made them, in the store's counters
	// read after (slabs-mover.t waits for slabs_moved, then looks at
	// evictions in the same reply).
	mv := e.Store.MoverStats()
	st := e.Store.Stats()
	threads := srv.Threads
	if threads == 0 {
		threads = uint64(max(set.Threads, 0))
	}
	user, sys := rusage()

	w.int("pid", int64(os.Getpid()))
	// memcached's uptime is its relative clock less ITEM_UPDATE_INTERVAL
	// (60): 2 at start, as its clock starts 62 s before it does.
	w.int("uptime", e.relTime(now)-60)
	w.int("time", now)
	w.str("version", e.version())
	w.str("libevent", "none")
	w.int("pointer_size", strconv.IntSize)
	w.str("rusage_user", formatUsec(user))
	w.str("rusage_system", formatUsec(sys))
	w.int("max_connections", int64(set.MaxConns))
	w.uint("curr_connections", srv.CurrConnections)
	w.uint("total_connections", srv.TotalConnections)
	tu := set.tuning()
	if tu.MaxConnsFast { // memcached counts refusals only when it refuses
		w.uint("rejected_connections", srv.RejectedConnections)
	}
	w.uint("connection_structures", srv.ConnStructures)
	mem := e.mem.stats(e.Settings)
	w.uint("response_obj_oom", mem.respOOM)
	w.uint("response_obj_count", mem.respObjs)
	w.uint("response_obj_bytes", mem.respBytes)
	w.uint("read_buf_count", mem.readBufs)
	w.uint("read_buf_bytes", mem.readBytes)
	w.uint("read_buf_bytes_free", mem.readFree)
	w.uint("read_buf_oom", mem.readOOM)
	w.uint("reserved_fds", 0)
	w.uint("cmd_get", st.CmdGet)
	w.uint("cmd_set", st.CmdSet)
	w.uint("cmd_flush", st.CmdFlush)
	w.uint("cmd_touch", st.CmdTouch)
	w.uint("cmd_meta", e.counters.metaCmds.Load())
	w.uint("get_hits", st.GetHits)
	w.uint("get_misses", st.GetMisses)
	w.uint("get_expired", st.GetExpired)
	w.uint("get_flushed", st.GetFlushed)
	if e.Store.Flash() != nil {
		fs := e.Store.FlashStats()
		w.uint("get_extstore", fs.GetExtstore)
		w.uint("get_aborted_extstore", fs.GetAbortedExtstore)
		w.uint("get_oom_extstore", fs.GetOOMExtstore)
		w.uint("recache_from_extstore", fs.RecacheFromExtstore)
		w.uint("miss_from_extstore", fs.MissFromExtstore)
		w.uint("badcrc_from_extstore", fs.BadcrcFromExtstore)
	}
	w.uint("delete_misses", st.DeleteMisses)
	w.uint("delete_hits", st.DeleteHits)
	w.uint("incr_misses", st.IncrMisses)
	w.uint("incr_hits", st.IncrHits)
	w.uint("decr_misses", st.DecrMisses)
	w.uint("decr_hits", st.DecrHits)
	w.uint("cas_misses", st.CasMisses)
	w.uint("cas_hits", st.CasHits)
	w.uint("cas_badval", st.CasBadval)
	w.uint("touch_hits", st.TouchHits)
	w.uint("touch_misses", st.TouchMisses)
	w.uint("store_too_large", e.counters.storeTooLarge.Load())
	w.uint("store_no_memory", e.counters.storeNoMemory.Load())
	w.uint("auth_cmds", e.counters.authCmds.Load())
	w.uint("auth_errors", e.counters.authErrors.Load())
	if set.IdleTimeout > 0 { // memcached shows it only with -o idle_timeout
		w.uint("idle_kicks", srv.IdleKicks)
	}
	w.uint("bytes_read", srv.BytesRead)
	w.uint("bytes_written", srv.BytesWritten)
	limit := st.LimitMaxbytes
	if limit == 0 && set.MaxBytes > 0 {
		limit = uint64(set.MaxBytes)
	}
	w.uint("limit_maxbytes", limit)
	w.uint("accepting_conns", boolNum(srv.AcceptingConns))
	w.uint("listen_disabled_num", srv.ListenDisabledNum)
	w.uint("time_in_listen_disabled_us", srv.ListenDisabledUs)
	w.uint("threads", threads)
	w.uint("conn_yields", srv.ConnYields)
	w.uint("hash_power_level", st.HashPowerLevel)
	w.uint("hash_bytes", st.HashBytes)
	w.uint("hash_is_expanding", 0)
	if tu.SlabReassign { // memcached shows the mover's counters only with it on
		w.uint("slab_reassign_rescues", mv.Rescues)
		w.uint("slab_reassign_chunk_rescues", mv.ChunkRescues)
		w.uint("slab_reassign_inline_reclaim", mv.InlineReclaim)
		w.uint("slab_reassign_busy_items", mv.BusyItems)
		w.uint("slab_reassign_busy_deletes", mv.BusyDeletes)
		w.uint("slab_reassign_busy_nomem", mv.BusyNomem)
		w.str("slab_reassign_last_busy_status", mv.LastBusyStatus)
		w.uint("slab_reassign_running", boolNum(mv.Running))
		w.uint("slabs_moved", mv.Moved)
	}
	// As memcached, the crawler's and the LRU maintainer's counters are
	// shown only while each runs (stats.t counts the fields with both off).
	maintainer := !set.LRUMaintainerDisabled
	if adm := e.adminSnapshot(); adm.crawler {
		w.uint("lru_crawler_running", boolNum(e.crawlerBusy.Load()))
		w.uint("lru_crawler_starts", adm.crawlerStarts)
	}
	if maintainer {
		w.uint("lru_maintainer_juggles", st.LRUMaintainerJuggles)
	}
	for _, name := range [...]string{"malloc_fails", "log_worker_dropped"} {
		w.uint(name, 0)
	}
	w.uint("log_worker_written", e.logs.written.Load())
	w.uint("log_watcher_skipped", e.logs.skipped.Load())
	w.uint("log_watcher_sent", e.logs.sent.Load())
	w.uint("log_watchers", uint64(e.logs.count()))
	if fc := e.Store.Flash(); fc != nil {
		fs := e.Store.FlashStats()
		w.str("extstore_memory_pressure", strconv.FormatFloat(e.Store.FlashMemoryPressure(), 'f', 2, 64))
		w.uint("extstore_compact_lost", fs.CompactLost)
		w.uint("extstore_compact_rescues", fs.CompactRescues)
		w.uint("extstore_compact_resc_cold", fs.CompactRescCold)
		w.uint("extstore_compact_resc_old", fs.CompactRescOld)
		w.uint("extstore_compact_skipped", fs.CompactSkipped)
		es := fc.Engine.Stats()
		es.Each(w.uint)
	}
	if t := set.TLS; t != nil { // memcached shows these only with -Z
		w.uint("ssl_handshake_errors", srv.SSLHandshakeErrors)
		w.uint("ssl_proto_errors", srv.SSLProtoErrors)
		since := int64(0)
		if t.Certs != nil {
			since = max(time.Now().Unix()-t.Certs.LoadedUnix(), 0)
		}
		w.int("time_since_server_cert_refresh", since)
	}
	// gocached's own, shown once nonzero so that the names match
	// memcached's until something happened: large replies cut because
	// their value was no longer pinned (which would be a bug).
	if st.RefsLost != 0 {
		w.uint("value_sends_cut", st.RefsLost)
	}
	w.uint("unexpected_napi_ids", srv.UnexpectedNAPIIDs)
	w.uint("round_robin_fallback", srv.RoundRobinFallback)
	w.uint("bytes", st.Bytes)
	w.uint("curr_items", st.CurrItems)
	w.uint("total_items", st.TotalItems)
	w.uint("slab_global_page_pool", st.SlabGlobalPagePool)
	w.uint("expired_unfetched", st.ExpiredUnfetched)
	w.uint("evicted_unfetched", st.EvictedUnfetched)
	if maintainer {
		w.uint("evicted_active", st.EvictedActive)
	}
	w.uint("evictions", st.Evictions)
	w.uint("reclaimed", st.Reclaimed)
	w.uint("crawler_reclaimed", st.CrawlerReclaimed)
	w.uint("crawler_items_checked", st.CrawlerItemsChecked)
	w.uint("lrutail_reflocked", 0)
	if maintainer {
		w.uint("moves_to_cold", st.MovesToCold)
		w.uint("moves_to_warm", st.MovesToWarm)
		w.uint("moves_within_lru", st.MovesWithinLRU)
		w.uint("direct_reclaims", st.DirectReclaims)
		w.uint("lru_bumps_dropped", st.LRUBumpsDropped)
	}
	return w.b
}

// tempLRU reports whether the store's TEMP LRU is on.
func (e *Env) tempLRU() bool {
	_, on := e.Store.TemporaryTTL()
	return on
}

// formatUsec renders microseconds as memcached's "%ld.%06ld" seconds.
func formatUsec(us int64) string {
	b := strconv.AppendInt(nil, us/1e6, 10)
	b = append(b, '.')
	frac := strconv.AppendInt(nil, us%1e6, 10)
	for i := len(frac); i < 6; i++ {
		b = append(b, '0')
	}
	return string(append(b, frac...))
}

// appendItems writes `stats items`: like memcached, only classes holding
// items. temp is whether the TEMP LRU is on (memcached lists number_temp
// only then); maintainer whether the LRU maintainer is (-o
// no_lru_maintainer, no_modern: off), without which memcached lists none
// of its queues' fields.
func appendItems(w *statWriter, classes []store.ClassStats, temp, maintainer bool) {
	const p = "items:"
	for _, c := range classes {
		if c.Items == 0 {
			continue
		}
		age := uint64(max(c.OldestAge, 0))
		w.classUint(p, c.ID, "number", c.Items)
		if maintainer {
			w.classUint(p, c.ID, "number_hot", c.NumberHot)
			w.classUint(p, c.ID, "number_warm", c.NumberWarm)
			w.classUint(p, c.ID, "number_cold", c.NumberCold)
			if temp {
				w.classUint(p, c.ID, "number_temp", c.NumberTemp)
			}
			w.classUint(p, c.ID, "age_hot", uint64(max(c.AgeHot, 0)))
			w.classUint(p, c.ID, "age_warm", uint64(max(c.AgeWarm, 0)))
		}
		w.classUint(p, c.ID, "age", age)
		w.classUint(p, c.ID, "mem_requested", c.MemRequested)
		w.classUint(p, c.ID, "evicted", c.Evicted)
		w.classUint(p, c.ID, "evicted_nonzero", c.EvictedNonzero)
		w.classUint(p, c.ID, "evicted_time", uint64(max(c.EvictedTime, 0)))
		w.classUint(p, c.ID, "outofmemory", c.Outofmemory)
		w.classUint(p, c.ID, "tailrepairs", 0)
		w.classUint(p, c.ID, "reclaimed", c.Reclaimed)
		w.classUint(p, c.ID, "expired_unfetched", c.ExpiredUnfetched)
		w.classUint(p, c.ID, "evicted_unfetched", c.EvictedUnfetched)
		if maintainer {
			w.classUint(p, c.ID, "evicted_active", c.EvictedActive)
		}
		w.classUint(p, c.ID, "crawler_reclaimed", c.CrawlerReclaimed)
		w.classUint(p, c.ID, "crawler_items_checked", c.CrawlerItemsChecked)
		w.classUint(p, c.ID, "lrutail_reflocked", 0)
		if !maintainer {
			continue
		}
		w.classUint(p, c.ID, "moves_to_cold", c.MovesToCold)
		w.classUint(p, c.ID, "moves_to_warm", c.MovesToWarm)
		w.classUint(p, c.ID, "moves_within_lru", c.MovesWithinLRU)
		w.classUint(p, c.ID, "direct_reclaims", c.DirectReclaims)
		w.classUint(p, c.ID, "hits_to_hot", c.HitsToHot)
		w.classUint(p, c.ID, "hits_to_warm", c.HitsToWarm)
		w.classUint(p, c.ID, "hits_to_cold", c.HitsToCold)
		w.classUint(p, c.ID, "hits_to_temp", c.HitsToTemp)
	}
}

// appendSlabs writes `stats slabs`: classes that own pages, then totals.
func appendSlabs(w *statWriter, classes []store.ClassStats, st store.Stats) {
	active := 0
	for _, c := range classes {
		if c.TotalPages == 0 {
			continue
		}
		active++
		id := c.ID
		w.classUint("", id, "chunk_size", uint64(c.ChunkSize))
		w.classUint("", id, "chunks_per_page", uint64(c.ChunksPer))
		w.classUint("", id, "total_pages", uint64(c.TotalPages))
		w.classUint("", id, "total_chunks", uint64(c.TotalPages)*uint64(c.ChunksPer))
		w.classUint("", id, "used_chunks", c.UsedChunks)
		w.classUint("", id, "free_chunks", c.FreeChunks)
		w.classUint("", id, "free_chunks_end", 0)
		w.classUint("", id, "get_hits", c.GetHits)
		w.classUint("", id, "cmd_set", c.CmdSet)
		w.classUint("", id, "delete_hits", c.DeleteHits)
		w.classUint("", id, "incr_hits", c.IncrHits)
		w.classUint("", id, "decr_hits", c.DecrHits)
		w.classUint("", id, "cas_hits", c.CasHits)
		w.classUint("", id, "cas_badval", c.CasBadval)
		w.classUint("", id, "touch_hits", c.TouchHits)
	}
	w.int("active_slabs", int64(active))
	w.uint("total_malloced", st.TotalMallocedBytes)
}
