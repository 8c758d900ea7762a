package integration

import "time"

// memcached 1.6.45's t/ suite, the default (GOCACHED_TSUITE_RELEASE unset
// or 1.6.45): the release gocached follows, so its suite has no reply
// gocached answers otherwise on purpose.

// extstoreExcluded: gocached has no flash tier; extstore is an issue of
// its own. The files do not skip themselves: gocached takes ext_path, as
// memcached does, and its -h names it.
const extstoreExcluded = "extstore (ext_path): gocached has no flash tier (an issue of its own)"

// tsuiteExcluded1645 is the t/*.t files of memcached 1.6.45 that are not
// run, each with the reason. Files that skip themselves still run: their
// skip is upstream's (refhang, slabhang, issue_140, issue_260, misbehave,
// and the 25 proxy*.t files, which skip without proxy_config in -h:
// gocached is no proxy, memcached's proxy routes to it).
var tsuiteExcluded1645 = map[string]string{
	"binary-extstore.t":  extstoreExcluded,
	"chunked-extstore.t": extstoreExcluded,
	"error-extstore.t":   extstoreExcluded,
	"extstore-buckets.t": extstoreExcluded,
	"extstore-cas.t":     extstoreExcluded,
	"extstore-jbod.t":    extstoreExcluded,
	"extstore-overdel.t": extstoreExcluded,
	"extstore-start.t":   extstoreExcluded,
	"extstore-tiered.t":  extstoreExcluded,
	"extstore-tiered2.t": extstoreExcluded,
	"extstore.t":         extstoreExcluded,
	"whitespace.t":       "checks the formatting of memcached's own sources in a git checkout, not the server",
}

// tsuiteKnown1645 is 1.6.45's ratchet of failing assertions (see
// TestMemcachedTSuite).
var tsuiteKnown1645 = []tsuiteKnownFailure{}

// tsuiteTimeouts1645 bounds files known to fail slowly, each cut at its
// bound (none now).
var tsuiteTimeouts1645 = map[string]time.Duration{}
