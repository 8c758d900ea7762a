package integration

import (
	"testing"
	"time"
)

// memcached 1.6.45's t/ suite, the default (GOCACHED_TSUITE_RELEASE unset
// or 1.6.45): the release gocached follows, so its suite has no reply
// gocached answers otherwise on purpose.

// tsuiteExcluded1645 is the t/*.t files of memcached 1.6.45 that are not
// run, each with the reason. Files that skip themselves still run: their
// skip is upstream's (refhang, slabhang, issue_140, issue_260, misbehave,
// and the 25 proxy*.t files, which skip without proxy_config in -h:
// gocached is no proxy, memcached's proxy routes to it).
var tsuiteExcluded1645 = map[string]string{
	"whitespace.t": "checks the formatting of memcached's own sources in a git checkout, not the server",
}

// tsuiteTLSExcluded1645 is the files the TLS mode leaves to the plain
// engines, none now: the TLS mode's clients are the suite's only TCP ones,
// and binary-extstore.t and extstore-overdel.t, whose perl clients keep
// Nagle's algorithm on, ran many times slower there until the engines
// stopped leaving ACKs to the delayed-ACK timer (reactor.AckNow).
var tsuiteTLSExcluded1645 = map[string]string{}

// withoutTLSExcluded is files without those the TLS mode leaves out.
func withoutTLSExcluded(t *testing.T, files []string) []string {
	var out []string
	for _, f := range files {
		if why, ok := tsuiteTLSExcluded1645[f]; ok {
			t.Logf("%s not run in the TLS mode: %s", f, why)
			continue
		}
		out = append(out, f)
	}
	return out
}

// tsuiteKnown1645 is 1.6.45's ratchet of failing assertions (see
// TestMemcachedTSuite).
var tsuiteKnown1645 = []tsuiteKnownFailure{}

// tsuiteTimeouts1645 bounds files known to fail slowly, each cut at its
// bound (none now).
var tsuiteTimeouts1645 = map[string]time.Duration{}
