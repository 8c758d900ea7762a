package integration

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
)

// tsuiteRace is a timing race in one of memcached's own t/ files, one that
// memcached loses as well when the machine is slow enough, recognised by
// what the file prints when it loses it.
type tsuiteRace struct {
	file   string // "" for any file
	stderr string // what the file writes to stderr when it loses the race
	why    string
}

// tsuiteRaces lists the races a loaded machine makes the suite lose. A file
// that fails with the race's own signature runs once more; any other
// failure, or the same one twice, fails the test as before.
var tsuiteRaces = []tsuiteRace{{
	file:   "binary.t",
	stderr: "Memcache Error (1): Not found",
	why: "\"Touch commands\" stores an item with a 1 s TTL and then gat()s it, which croaks on a miss: " +
		"when the server's clock turns between the two (memcached's clock ticks once a second, and " +
		"a scheduling delay of a loaded machine between the two requests makes a tick likely) the " +
		"item has expired, in memcached too",
}, {
	file:   "stats.t",
	stderr: "Failed test 'get_expired counter is 1'",
	why: "it stores an item with an exptime already past and gets it at once, expecting get_expired 1: " +
		"the LRU maintainer reclaims an expired item it meets at a queue's tail (counted as reclaimed), " +
		"so when it juggles the class between the set and the get, the get is a plain miss, in memcached " +
		"too (its maintainer does the same, paced from 1 ms to 1 s per class)",
}, {
	file:   "flush-all.t",
	stderr: "Failed test 'foo == '1234''",
	why: "it takes time()+2, sends `flush_all` for it, sets foo and expects to read it back: the flush " +
		"takes effect a second before the time given (memcached's oldest_live), so when the server's " +
		"clock turns between the file's time() and the get, foo is already flushed, in memcached too " +
		"(gocached's clock turns at the wall clock's second, memcached's at a phase of its own)",
}, {
	stderr: "Address already in use",
	why: "lib/MemcachedTest.pm's free_port binds a random port in 30000-49999, closes it and hands it to " +
		"the server it starts next: in between, another file's server or any connection's ephemeral port " +
		"(32768 and up) can take it, and the server, memcached too, cannot listen",
}, {
	stderr: "Failed to startup/connect to memcached server.",
	why: "the same race as a taken port, won by a connection: when another file's client connection got " +
		"127.0.0.1:port as its ephemeral port between free_port and the server's bind, the server, " +
		"memcached 1.6.45 too, skips the IPv4 wildcard as in use and listens on IPv6 alone (memcached's " +
		"server_socket rule), without a word, so the file's 80 connections to 127.0.0.1 are refused; " +
		"files holding many connections (maxconns.t) in the same stage make it likely",
}}

// rerunRaces runs again every file in results that lost a race of
// tsuiteRaces, replacing its result, and logs that it did.
func rerunRaces(ctx context.Context, t *testing.T, dir string, results map[string]*tapResult, env []string) {
	t.Helper()
	for _, race := range tsuiteRaces {
		files := []string{race.file}
		if race.file == "" {
			files = slices.Sorted(maps.Keys(results))
		}
		for _, file := range files {
			r, ok := results[file]
			if !ok || r.complete() && len(r.failed) == 0 || !strings.Contains(r.stderr, race.stderr) {
				continue
			}
			t.Logf("%s lost a known timing race (%s): %s; running it again", file, race.stderr, race.why)
			results[file] = runTAPFile(ctx, dir, file, env, tsuiteFileLimit)
		}
	}
}
