package protocol

import "strconv"

// `stats settings`: every setting memcached lists, in its order.

// appendSettings writes `stats settings`.
func (e *Env) appendSettings(w *statWriter) {
	set := e.settings()
	inter := set.Interface
	if inter == "" {
		inter = "NULL"
	}
	var verbosity int64
	if set.Verbosity != nil {
		verbosity = int64(set.Verbosity.Load())
	}
	proto := set.BindingProtocol
	if proto == "" {
		proto = "ascii"
	}
	adm := e.adminSnapshot()
	maxbytes := set.MaxBytes
	if e.Store != nil {
		maxbytes = e.Store.MemoryLimit() // cache_memlimit changes it
	}
	factor := set.GrowthFactor
	if factor == 0 {
		factor = 1.25
	}
	chunk := set.ChunkSize
	if chunk == 0 {
		chunk = 48
	}
	w.int("maxbytes", maxbytes)
	w.int("maxconns", int64(set.MaxConns))
	w.int("tcpport", int64(set.Port))
	w.int("udpport", int64(set.UDPPort))
	w.str("inter", inter)
	w.int("verbosity", verbosity)
	w.int("oldest", e.oldestLive.Load())
	if set.Evictions {
		w.str("evictions", "on")
	} else {
		w.str("evictions", "off")
	}
	if set.DomainSocket != "" {
		w.str("domain_socket", set.DomainSocket)
	} else {
		w.str("domain_socket", "NULL")
	}
	umask := set.Umask
	if umask == "" {
		umask = "700"
	}
	w.str("umask", umask)
	w.flag("shutdown_command", set.ShutdownEnabled)
	w.str("growth_factor", fmt2(factor))
	w.int("chunk_size", int64(chunk))
	w.int("num_threads", int64(set.Threads))
	w.int("num_threads_per_udp", int64(set.Threads))
	w.str("stat_key_prefix", string(e.delimiter()))
	w.flag("detail_enabled", e.detailEnabled())
	w.int("reqs_per_event", int64(e.reqsPerEvent()))
	w.flag("cas_enabled", set.CASEnabled)
	w.int("tcp_backlog", int64(set.TCPBacklog))
	w.str("binding_protocol", proto)
	w.flag("auth_enabled_sasl", e.SASL != nil)
	if a := e.ASCIIAuth; a != nil {
		w.str("auth_enabled_ascii", a.Path) // memcached prints the file's name
	} else {
		w.flag("auth_enabled_ascii", false)
	}
	w.int("item_size_max", int64(set.ItemSizeMax))
	tu := e.Settings.tuning()
	w.flag("maxconns_fast", tu.MaxConnsFast)
	w.int("hashpower_init", int64(set.HashPowerInit))
	w.flag("slab_reassign", tu.SlabReassign)
	w.int("slab_automove", int64(adm.automove))
	w.str("slab_automove_ratio", fmt2(adm.automoveRatio))
	w.int("slab_automove_window", int64(adm.automoveWindow))
	w.int("slab_chunk_max", int64(set.slabChunkMax()))
	w.flag("lru_crawler", adm.crawler)
	w.int("lru_crawler_sleep", int64(adm.crawlerSleep))
	w.int("lru_crawler_tocrawl", int64(adm.crawlerToCrawl))
	w.int("tail_repair_time", int64(tu.TailRepairTime))
	w.flag("flush_enabled", !set.FlushDisabled)
	w.flag("dump_enabled", !set.DumpDisabled)
	// memcached's name for the hash -o chose (murmur3 unless jenkins, xxh3
	// or no_modern): the one `stats detail dump` orders prefixes by. The
	// store spreads keys over its shards by xxhash whatever it says.
	w.str("hash_algorithm", tu.HashAlgorithm)
	// The store's background sweep does the maintainer's job (reclaiming
	// what expired or was flushed); -o no_lru_maintainer turns the flag
	// off with the counters, as memcached does.
	w.flag("lru_maintainer_thread", !set.LRUMaintainerDisabled)
	w.flag("lru_segmented", adm.segmented)
	w.int("hot_lru_pct", int64(adm.hotPct))
	w.int("warm_lru_pct", int64(adm.warmPct))
	w.str("hot_max_factor", fmt2(adm.hotFactor))
	w.str("warm_max_factor", fmt2(adm.warmFactor))
	tempTTL, tempLRU := e.Store.TemporaryTTL()
	w.flag("temp_lru", tempLRU)
	w.int("temporary_ttl", tempTTL)
	w.int("idle_timeout", int64(set.IdleTimeout))
	w.int("watcher_logbuf_size", int64(e.watcherLogbufSize()))
	w.uint("worker_logbuf_size", tu.WorkerLogbufSize)
	w.uint("read_buf_mem_limit", tu.ReadBufMemLimit)
	w.flag("track_sizes", e.Store.SizesTracked())
	w.flag("inline_ascii_response", false)
	ext := e.extSettings()
	w.uint("ext_item_size", uint64(ext.ItemSize))
	w.uint("ext_item_age", uint64(ext.ItemAge))
	w.uint("ext_low_ttl", uint64(ext.LowTTL))
	w.uint("ext_recache_rate", uint64(ext.RecacheRate))
	w.uint("ext_wbuf_size", e.extWbufSize())
	w.uint("ext_compact_under", ext.Policy.CompactUnder)
	w.uint("ext_drop_under", ext.Policy.DropUnder)
	w.uint("ext_max_sleep", uint64(ext.MaxSleep))
	w.str("ext_max_frag", fmt2(ext.Policy.MaxFrag))
	w.str("slab_automove_freeratio", strconv.FormatFloat(adm.automoveFreeRatio, 'f', 3, 64))
	w.flag("ext_drop_unread", ext.Policy.DropUnread)
	tlsSet := set.TLS
	if tlsSet == nil {
		tlsSet = set.TLSOptions
	}
	if tlsSet == nil {
		tlsSet = &TLSSettings{}
	}
	orNull := func(v, null string) string {
		if v == "" {
			return null
		}
		return v
	}
	w.flag("ssl_enabled", set.TLS != nil)
	w.str("ssl_chain_cert", orNull(tlsSet.ChainCert, "(null)"))
	w.str("ssl_key", orNull(tlsSet.Key, "(null)"))
	w.int("ssl_verify_mode", int64(tlsSet.VerifyMode))
	w.int("ssl_keyformat", 1)
	w.str("ssl_ciphers", orNull(tlsSet.Ciphers, "NULL"))
	w.str("ssl_ca_cert", orNull(tlsSet.CACert, "NULL"))
	w.uint("ssl_wbuf_size", tu.SSLWbufSize)
	w.flag("ssl_session_cache", tlsSet.SessionCache)
	w.flag("ssl_kernel_tls", false)
	w.str("ssl_min_version", orNull(tlsSet.MinVersion, "tlsv1.2"))
	w.int("num_napi_ids", int64(set.NAPIIDs))
	w.str("memory_file", orNull(set.MemoryFile, "(null)"))
	// memcached 1.6.45's client flags are 32 bits wide, as gocached's.
	w.int("client_flags_size", 4)
}
