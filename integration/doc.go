// Package integration holds gocached's end-to-end tests: the real binary is
// built once per test run, started on a free loopback port with each engine
// (--engine=go and --engine=epoll), and driven by real clients over real
// sockets: pymemcache, libmemcached-tools, memccapable, gomemcache, and a
// differential test that replays raw request scripts against Debian's
// memcached and gocached and compares the replies byte for byte.
// TestObservables checks that both engines show memcached's stats names,
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
// GOCACHED_IT_TARGETS (comma-separated subset of "go,epoll,memcached")
// narrows the servers the suites run against; GOCACHED_IT_RACE=1 builds the
// server with -race.
package integration
