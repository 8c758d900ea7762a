// Package integration holds gocached's end-to-end tests: the real binary is
// built once per test run, started on a free loopback port with each engine
// (--engine=go, --engine=epoll and --engine=uring), and driven by real clients over real
// sockets: pymemcache, libmemcached-tools, memccapable, gomemcache, and a
// differential test that replays raw request scripts against memcached
// 1.6.45 (built from Debian's source package by internal/refmc: the
// reference; Debian 12's 1.6.18 only where a test is about it) and
// gocached and compares the replies byte for byte.
// TestObservables checks that every engine shows memcached's stats names,
// "stats conns" entries and states, and connection counts. Binary-protocol
// clients (Dalli, pylibmc and php-memcached in binary mode, memccapable -b)
// and SASL; UDP framing against memcached; Debian's service wrapper and
// contrib's; the Prometheus endpoint; a porcupine linearizability check over
// 16 concurrent clients on every engine; a checksummed value-integrity soak;
// twemproxy (nutcracker) in front of three servers; memcached-tool in every
// mode and memcdump; PHP sessions and libmemcached's tools in binary mode;
// php-memcache and Cache::Memcached::Fast (text protocol), whose transcripts
// must equal memcached's; mutilate, built from a pinned commit and cached.
// Servers are built, started and stopped through internal/testproc.
//
// Tests that need an external tool skip when it is missing, unless
// GOCACHED_REQUIRE_TESTBED=1 is set (CI), in which case they fail.
// GOCACHED_IT_TARGETS (comma-separated subset of "go,epoll,uring,memcached")
// narrows the servers the suites run against; GOCACHED_IT_RACE=1 builds the
// server with -race.
//
// The suite is too long for one `go test` timeout, so it is run in areas,
// each its own `go test -race` run (test.sh runs them beside the other
// stages; tsuite once per engine).
// A file with Test functions is named AREA_FEATURE_test.go; files of shared
// helpers are harness_*_test.go and hold none. The areas:
//
//   - clients: real client libraries and tools (pymemcache, pylibmc,
//     Dalli, PHP, Perl, gomemcache, libmemcached's tools, memcached-tool,
//     memcaslap, mutilate, twemproxy, SASL).
//   - diff: differential against memcached: request scripts, item classes,
//     stats sizes and settings, temporary TTL, UDP datagrams.
//   - hostile: bad and randomized input (seeded random differentials in
//     text and binary), connection limits, descriptor leaks, value
//     integrity and linearizability under concurrent clients.
//   - reference: builds the reference memcached and the t/ suites' trees
//     into the test cache (test.sh runs it before the other stages).
//   - memory: memory bounds: item size, -m and -M, backpressure from a
//     client that does not read.
//   - rss: peak RSS under floods of up to 2 GB per engine (the longest
//     area after tsuite).
//   - server: observables (stats, stats conns), UDP, TLS, the metrics
//     endpoint, socket marks, idle timeout.
//   - service: process life and packaging: command-line errors, listen
//     failures, rlimits, dropping root, signals and stop lines, the
//     service wrappers.
//   - tsuite: memcached's own t/ suite against gocached (the longest):
//     1.6.45's, or 1.6.18's with GOCACHED_TSUITE_RELEASE=1.6.18.
//
// integration/tests-in prints the areas, and the -run regex of one; to run
// one area alone (from the module root):
//
//	go test -race -run "$(./integration/tests-in AREA)" ./integration
//
// `./integration/tests-in --check` fails if a Test function is in a file
// outside that naming.
package integration
