package main

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/gocached/gocached/internal/protocol"
)

// memcached's -o takes a comma-separated list of suboptions, name or
// name=value. gocached accepts every suboption memcached 1.6.18 knows, so
// that memcached's command lines start unchanged, and says in one log line
// what each does here.

// extKind is what gocached does with a suboption.
type extKind uint8

const (
	// extInternal tunes a memcached mechanism gocached does not have
	// (slab allocator, LRU threads, extstore, hash table growth): accepted
	// with one info line.
	extInternal extKind = iota
	// extMissing names a behaviour gocached does not implement yet: accepted
	// with a warning, so the operator knows it has no effect.
	extMissing
	// extSame is gocached's behaviour already (maxconns_fast: clients over
	// -c are refused at once).
	extSame
	// extApplied is implemented: cmd reads its value (idle_timeout).
	extApplied
)

// extOption describes one suboption.
type extOption struct {
	kind    extKind
	numeric bool // memcached requires a number: "Missing numeric argument for X"
}

var extOptions = map[string]extOption{
	"maxconns_fast": {extSame, false}, "no_maxconns_fast": {extMissing, false},
	"hashpower": {extApplied, true}, "no_hashexpand": {extApplied, false},
	"tail_repair_time": {extInternal, true}, "hash_algorithm": {extInternal, false},
	"lru_crawler": {extApplied, false}, "no_lru_crawler": {extApplied, false},
	"lru_crawler_sleep": {extInternal, true}, "lru_crawler_tocrawl": {extInternal, true},
	"lru_maintainer": {extApplied, false}, "no_lru_maintainer": {extApplied, false},
	"lru_segmented": {extInternal, false}, "no_lru_segmented": {extInternal, false},
	"hot_lru_pct": {extInternal, true}, "warm_lru_pct": {extInternal, true},
	"hot_max_factor": {extInternal, true}, "warm_max_factor": {extInternal, true},
	"temporary_ttl": {extInternal, true}, "read_buf_mem_limit": {extInternal, true},
	"slab_reassign": {extInternal, false}, "slab_automove": {extInternal, false},
	"slab_automove_ratio": {extInternal, true}, "slab_automove_window": {extInternal, true},
	"slab_automove_freeratio": {extInternal, true}, "slab_chunk_max": {extInternal, true},
	"modern": {extInternal, false}, "no_modern": {extApplied, false},
	"drop_privileges": {extInternal, false}, "no_drop_privileges": {extInternal, false},
	"meta_response_old": {extMissing, false}, "track_sizes": {extMissing, false},
	"idle_timeout": {extApplied, true}, "watcher_logbuf_size": {extApplied, true},
	"worker_logbuf_size": {extMissing, true}, "sock_cookie_id": {extMissing, true},
	"ssl_chain_cert": {extApplied, false}, "ssl_key": {extApplied, false},
	"ssl_keyformat": {extApplied, true}, "ssl_verify_mode": {extApplied, true},
	"ssl_ciphers": {extApplied, false}, "ssl_ca_cert": {extApplied, false},
	"ssl_wbuf_size": {extInternal, true}, "ssl_session_cache": {extApplied, false},
	"ssl_kernel_tls": {extMissing, false}, "ssl_min_version": {extApplied, true},
	"slab_sizes": {extInternal, false}, "no_chunked_items": {extInternal, false},
	"no_slab_reassign": {extInternal, false}, "no_slab_automove": {extInternal, false},
	// Deprecated in memcached, still accepted there (with a message for
	// resp_obj_mem_limit), so old command lines keep starting.
	"inline_ascii_resp": {extInternal, false}, "no_inline_ascii_resp": {extInternal, false},
	"resp_obj_mem_limit": {extInternal, false},
	// memcached-debug's option for its test suite (t/lib/MemcachedTest.pm
	// passes it on every start); gocached has no privilege sandbox to relax.
	"relaxed_privileges": {extInternal, false},
}

// extstore's options (ext_path, ext_page_size, ...) tune a storage tier
// gocached does not have.
const extstorePrefix = "ext_"

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
		for _, item := range strings.Split(v, ",") {
			if item == "" {
				continue
			}
			name, value, hasValue := strings.Cut(item, "=")
			opt, ok := extOptions[name]
			if !ok && strings.HasPrefix(name, extstorePrefix) && len(name) > len(extstorePrefix) {
				opt, ok = extOption{kind: extInternal}, true
			}
			if !ok {
				return nil, usagef("Illegal suboption %q", item)
			}
			if opt.numeric {
				if !hasValue || value == "" {
					return nil, usagef("Missing numeric argument for %s", name)
				}
				// memcached reads hashpower with atoi: "abc" is 0, too low.
				if _, err := strconv.ParseFloat(value, 64); err != nil && name != "hashpower" {
					return nil, usagef("invalid value for %s: %q", name, value)
				}
			}
			if name == "hashpower" {
				if err := checkHashPower(value); err != nil {
					return nil, err
				}
			}
			out = append(out, extSetting{name: name, value: value, opt: opt})
		}
	}
	return out, nil
}

// checkHashPower refuses what memcached refuses for -o hashpower: below 12
// or above 32, with its messages (atoi's reading of the value).
func checkHashPower(value string) error {
	n := extAtoi(value)
	switch {
	case n < 12:
		return usagef("Initial hashtable multiplier of %d is too low", n)
	case n > 32:
		return usagef("Initial hashtable multiplier of %d is too high\n"+
			"Choose a value based on \"STAT hash_power_level\" from a running instance", n)
	}
	return nil
}

// extAtoi reads a number as C's atoi does: the leading digits, 0 if none.
func extAtoi(s string) int {
	n, i, neg := 0, 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg, i = s[i] == '-', i+1
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<30; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
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
	return extAtoi(v)
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
		case extSame:
			log.Debug(fmt.Sprintf("-o %s is gocached's behaviour already", item))
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

// applyExtSettings puts the suboptions the protocol obeys into its
// Settings, in command-line order as memcached reads them: no_lru_crawler
// and no_modern start the LRU crawler off, lru_crawler on, and likewise
// no_lru_maintainer, no_modern and lru_maintainer for the LRU maintainer;
// watcher_logbuf_size is in KB, as memcached's.
func applyExtSettings(settings []extSetting, s *protocol.Settings) {
	for _, e := range settings {
		switch e.name {
		case "watcher_logbuf_size":
			if n, err := strconv.ParseFloat(e.value, 64); err == nil && n >= 1 {
				s.WatcherLogbufSize = int(n) << 10
			}
		case "no_lru_crawler":
			s.LRUCrawlerDisabled = true
		case "lru_crawler":
			s.LRUCrawlerDisabled = false
		case "no_modern":
			s.LRUCrawlerDisabled, s.LRUMaintainerDisabled = true, true
		case "no_lru_maintainer":
			s.LRUMaintainerDisabled = true
		case "lru_maintainer":
			s.LRUMaintainerDisabled = false
		}
	}
	s.HashPowerInit = extHashPower(settings)
}
