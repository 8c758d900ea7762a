package config

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// memcached's -o takes a comma-separated list of suboptions, name or
// name=value. gocached accepts every suboption memcached 1.6.45 knows, so
// that memcached's command lines start unchanged, and says in one log line
// what each does here; but for those of its proxy (proxy_config,
// proxy_arg, proxy_uring, proxy_memprofile), which are refused as a
// memcached built without the proxy refuses them: gocached is no proxy.

// extKind is what gocached does with a suboption.
type extKind uint8

const (
	// extInternal tunes a memcached mechanism gocached does not have
	// (the crawler's pacing, tail repair, the worker log
	// buffers): accepted with one info line.
	extInternal extKind = iota
	// extMissing names a behaviour gocached does not implement yet: accepted
	// with a warning, so the operator knows it has no effect.
	extMissing
	// extApplied is implemented: the server obeys its value.
	extApplied
)

// extOption describes one suboption; extChecks has memcached's checks of
// its value.
type extOption struct {
	kind extKind
}

var extOptions = map[string]extOption{
	"maxconns_fast": {extApplied}, "no_maxconns_fast": {extApplied},
	"hashpower": {extApplied}, "no_hashexpand": {extApplied},
	"tail_repair_time": {extInternal}, "hash_algorithm": {extApplied},
	"lru_crawler": {extApplied}, "no_lru_crawler": {extApplied},
	"lru_crawler_sleep": {extInternal}, "lru_crawler_tocrawl": {extInternal},
	"lru_maintainer": {extApplied}, "no_lru_maintainer": {extApplied},
	"hot_lru_pct": {extApplied}, "warm_lru_pct": {extApplied},
	"hot_max_factor": {extApplied}, "warm_max_factor": {extApplied},
	"temporary_ttl": {extApplied}, "read_buf_mem_limit": {extApplied},
	"slab_reassign": {extApplied}, "slab_automove": {extApplied},
	"slab_automove_ratio": {extApplied}, "slab_automove_window": {extApplied},
	"slab_automove_freeratio": {extInternal}, "slab_chunk_max": {extApplied},
	"modern": {extInternal}, "no_modern": {extApplied},
	"drop_privileges": {extInternal}, "no_drop_privileges": {extInternal},
	"track_sizes":  {extApplied},
	"idle_timeout": {extApplied}, "watcher_logbuf_size": {extApplied},
	"worker_logbuf_size": {extInternal}, "sock_cookie_id": {extApplied},
	"ssl_chain_cert": {extApplied}, "ssl_key": {extApplied},
	"ssl_keyformat": {extApplied}, "ssl_verify_mode": {extApplied},
	"ssl_ciphers": {extApplied}, "ssl_ca_cert": {extApplied},
	"ssl_wbuf_size": {extInternal}, "ssl_session_cache": {extApplied},
	"ssl_kernel_tls": {extMissing}, "ssl_min_version": {extApplied},
	"slab_sizes": {extApplied}, "no_chunked_items": {extApplied},
	"no_slab_reassign": {extApplied}, "no_slab_automove": {extApplied},
	// Deprecated in memcached, still accepted there (with a message for
	// resp_obj_mem_limit), so old command lines keep starting.
	"inline_ascii_resp": {extInternal}, "no_inline_ascii_resp": {extInternal},
	"resp_obj_mem_limit": {extInternal},
	// memcached-debug's option for its test suite (t/lib/MemcachedTest.pm
	// passes it on every start); gocached has no privilege sandbox to relax.
	"relaxed_privileges": {extInternal},
	// extstore's: the flash tier (config/flash.go builds it).
	"ext_page_size": {extApplied}, "ext_wbuf_size": {extApplied}, "ext_threads": {extApplied},
	"ext_io_depth": {extApplied}, "ext_path": {extApplied}, "ext_item_size": {extApplied},
	"ext_item_age": {extApplied}, "ext_low_ttl": {extApplied}, "ext_recache_rate": {extApplied},
	"ext_compact_under": {extApplied}, "ext_drop_under": {extApplied}, "ext_max_sleep": {extApplied},
	"ext_max_frag": {extApplied}, "ext_drop_unread": {extApplied},
}

// extSetting is one parsed suboption.
type extSetting struct {
	name, value string
	opt         extOption
}

// parseExtOptions reads the values of every -o, with memcached's messages
// for what it refuses.
func parseExtOptions(values []string) ([]extSetting, error) {
	var out []extSetting
	for _, v := range values {
		var err error
		if out, err = appendExtOptions(out, v, func(err error) error { return err }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendExtOptions reads one -o's list after the suboptions before it, as
// memcached's loop reads it. A refusal goes through note, which may keep
// it for later (gocached's refusals of garbage memcached takes) and let
// the list go on, the value kept as memcached reads it.
func appendExtOptions(out []extSetting, v string, note func(error) error) ([]extSetting, error) {
	// memcached's loop (while (*subopts != '\0') getsubopt(...)) stops at
	// the end of the string, so one trailing comma ends the list, but an
	// empty suboption before it ("-o ,a", "-o a,,b", "-o a,,") is
	// refused as any unknown name: Illegal suboption "".
	items := strings.Split(v, ",")
	if v == "" {
		items = nil
	} else if strings.HasSuffix(v, ",") {
		items = items[:len(items)-1]
	}
	for _, item := range items {
		name, value, hasValue := strings.Cut(item, "=")
		opt, ok := extOptions[name]
		if !ok {
			return out, mcFail("Illegal suboption %q", item)
		}
		if err := note(checkExt(name, value, hasValue)); err != nil {
			return out, err
		}
		out = append(out, extSetting{name: name, value: value, opt: opt})
	}
	return out, nil
}

// checkHashPower refuses what memcached refuses for -o hashpower: below 12
// or above 32, with its messages (atoi's reading of the value).
func checkHashPower(value string) error {
	n := cAtoi(value)
	switch {
	case n < 12:
		return mcFail("Initial hashtable multiplier of %d is too low", n)
	case n > 32:
		return mcFail("Initial hashtable multiplier of %d is too high\n"+
			"Choose a value based on \"STAT hash_power_level\" from a running instance", n)
	}
	return nil
}

// extLast is the value of the last -o name given, and whether one was.
func extLast(settings []extSetting, name string) (value string, given bool) {
	for _, s := range settings {
		if s.name == name {
			value, given = s.value, true
		}
	}
	return value, given
}

// extHashPower is -o hashpower as memcached reads it (atoi of the last
// one given), 0 without it.
func extHashPower(settings []extSetting) int {
	v, _ := extLast(settings, "hashpower")
	return cAtoi(v)
}

// extHas reports whether suboption name was given.
func extHas(settings []extSetting, name string) bool {
	_, given := extLast(settings, name)
	return given
}

// logExtOptions says, once per suboption, what it does in gocached.
func logExtOptions(settings []extSetting, log *slog.Logger) {
	for _, s := range settings {
		item := s.name
		if s.value != "" {
			item += "=" + s.value
		}
		switch s.opt.kind {
		case extInternal:
			log.Info(fmt.Sprintf("-o %s tunes a memcached internal gocached does not have; accepted, no effect", item))
		case extMissing:
			log.Warn(fmt.Sprintf("-o %s is not implemented by gocached yet; accepted, no effect", item))
		case extApplied:
			log.Debug(fmt.Sprintf("-o %s applied", item))
		}
	}
}

// extInt is the last value given for a numeric suboption, or def.
func extInt(settings []extSetting, name string, def int) int {
	if v, given := extLast(settings, name); given {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			return int(n)
		}
	}
	return def
}

// lruMaintainerOff replays memcached's switches of its LRU maintainer, and
// with it of its segmented LRU: no_modern and no_lru_maintainer turn it
// off, lru_maintainer on, the last one given winning.
func lruMaintainerOff(settings []extSetting) bool {
	off := false
	for _, e := range settings {
		switch e.name {
		case "no_modern", "no_lru_maintainer":
			off = true
		case "lru_maintainer":
			off = false
		}
	}
	return off
}

// crawlerAndWatcher replays, in command-line order as memcached reads
// them, the LRU crawler's switches (no_lru_crawler and no_modern turn it
// off, lru_crawler on) and watcher_logbuf_size, in KB as memcached's.
func crawlerAndWatcher(settings []extSetting) (crawlerOff bool, watcherLogbuf int) {
	for _, e := range settings {
		switch e.name {
		case "watcher_logbuf_size":
			if n, err := strconv.ParseFloat(e.value, 64); err == nil && n >= 1 {
				watcherLogbuf = int(n) << 10
			}
		case "no_lru_crawler", "no_modern":
			crawlerOff = true
		case "lru_crawler":
			crawlerOff = false
		}
	}
	return crawlerOff, watcherLogbuf
}
