package integration

import (
	"strings"
	"testing"
	"time"
)

// tunedSettings are the `stats settings` fields of memcached internals
// gocached does not have, which it reports as -o set them.
var tunedSettings = []string{
	"maxconns_fast", "slab_reassign", "slab_automove", "slab_automove_ratio",
	"slab_automove_window", "slab_automove_freeratio", "tail_repair_time",
	"lru_crawler", "lru_crawler_sleep", "lru_crawler_tocrawl", "lru_maintainer_thread",
	"hot_lru_pct", "warm_lru_pct", "hot_max_factor", "warm_max_factor",
	"worker_logbuf_size", "read_buf_mem_limit", "track_sizes", "temp_lru",
	"temporary_ttl", "idle_timeout", "watcher_logbuf_size", "slab_chunk_max", "ssl_wbuf_size",
	"hash_algorithm", "lru_segmented",
	"ssl_chain_cert", "ssl_key", "ssl_verify_mode", "ssl_ciphers", "ssl_ca_cert", "ssl_session_cache", "ssl_min_version",
}

// TestTunedSettings: every engine reports the -o knobs in `stats settings`
// with the values memcached reports for the same command line, and leaves
// out of `stats` what memcached leaves out with the mover or maxconns_fast
// off.
func TestTunedSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    string
	}{
		{"defaults", "modern"},
		{"values", "slab_automove=2,slab_automove_ratio=0.5,slab_automove_window=10,slab_automove_freeratio=0.02," +
			"hot_lru_pct=10,warm_lru_pct=50,hot_max_factor=0.5,warm_max_factor=3.0,tail_repair_time=100," +
			"lru_crawler_sleep=50,lru_crawler_tocrawl=10,read_buf_mem_limit=8,worker_logbuf_size=64,track_sizes,ssl_wbuf_size=64"},
		{"no_modern", "no_modern"},
		{"no_modern then back", "no_modern,slab_reassign,slab_automove,maxconns_fast,lru_crawler"},
		{"switches off", "no_slab_reassign,no_slab_automove,no_maxconns_fast"},
		{"jenkins", "hash_algorithm=jenkins"},
		{"xxh3", "hash_algorithm=xxh3"},
		// Without -Z memcached only reports them.
		{"ssl options", "ssl_chain_cert=/x.pem,ssl_key=/y.pem,ssl_session_cache,ssl_verify_mode=1,ssl_min_version=3,ssl_ca_cert=/z.pem"},
		{"no_modern, then murmur3", "no_modern,hash_algorithm=murmur3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := dialRaw(t, startServer(t, referenceTarget, "-o", tc.o).Addr())
			wantSet, wantStats := ref.stats("settings"), ref.stats("")
			ref.expect("set a 0 0 1\r\nx\r\n", "STORED\r\n")
			wantItems := strings.Join(statNamesOf(ref, "items"), " ")
			runTargets(t, engineTargets, func(t *testing.T, tg target) {
				c := dialRaw(t, startServer(t, tg, "-o", tc.o).Addr())
				set, stats := c.stats("settings"), c.stats("")
				c.expect("set a 0 0 1\r\nx\r\n", "STORED\r\n")
				if got := strings.Join(statNamesOf(c, "items"), " "); got != wantItems {
					t.Errorf("stats items fields:\n%s\nmemcached:\n%s", got, wantItems)
				}
				for _, name := range tunedSettings {
					if want := wantSet[name]; set[name] != want {
						t.Errorf("stats settings %s: %q, memcached 1.6.45 %q", name, set[name], want)
					}
				}
				for _, name := range []string{"rejected_connections", "slab_reassign_rescues", "slabs_moved"} {
					_, got := stats[name]
					if _, want := wantStats[name]; got != want {
						t.Errorf("stats has %s: %v, memcached: %v", name, got, want)
					}
				}
			})
		})
	}
}

// TestDetailDumpOrderFollowsHash: memcached lists `stats detail dump`
// prefixes in the order of its hash table, so -o hash_algorithm (and
// no_modern, which picks jenkins) change it; every engine lists them as
// memcached does.
func TestDetailDumpOrderFollowsHash(t *testing.T) {
	for _, o := range []string{"modern", "no_modern", "hash_algorithm=jenkins", "no_modern,hash_algorithm=murmur3", "hash_algorithm=xxh3"} {
		t.Run(o, func(t *testing.T) {
			dump := func(tg target) string {
				c := dialRaw(t, startServer(t, tg, "-o", o).Addr())
				c.expect("stats detail on\r\n", "OK\r\n")
				c.expect("get a:1 b:1 c:1 x:1 k:1 foo:1 bar:2 zz:3\r\n", "END\r\n")
				c.send("stats detail dump\r\n")
				got, err := c.readUntil("END\r\n", 5*time.Second)
				if err != nil {
					t.Fatalf("stats detail dump: %v (%q)", err, got)
				}
				return got
			}
			want := dump(referenceTarget)
			runTargets(t, engineTargets, func(t *testing.T, tg target) {
				if got := dump(tg); got != want {
					t.Errorf("stats detail dump:\n%s\nmemcached:\n%s", got, want)
				}
			})
		})
	}
}
