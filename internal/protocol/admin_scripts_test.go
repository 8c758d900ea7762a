package protocol

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// adminScripts are the admin commands' replies as memcached 1.6.18 gives
// them with its default settings (checked by TestAdminScriptsAgainstMemcached).
// Scripts that change server settings are followed, on memcached, by
// restoreAdmin, since one memcached serves every script.
var adminScripts = []script{
	{name: "lru_crawler errors", in: "lru_crawler crawl 0\r\nlru_crawler crawl 64\r\nlru_crawler crawl 1,x\r\nlru_crawler crawl x\r\nlru_crawler crawl ,\r\n" +
		"lru_crawler\r\nlru_crawler foo\r\nlru_crawler crawl\r\nlru_crawler metadump\r\nlru_crawler metadump a b c\r\n" +
		"lru_crawler mgdump all\r\nlru_crawler mgdump\r\nlru_crawler enable\r\nlru_crawler enable x\r\nlru_crawler noreply\r\n", want: "BADCLASS invalid class id\r\nBADCLASS invalid class id\r\nBADCLASS invalid class id\r\nBADCLASS invalid class id\r\nNOTSTARTED no items to crawl\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR cannot pipeline other commands before mgdump\r\nERROR\r\nERROR failed to start lru crawler thread\r\nERROR\r\n", since: "1.6.40"},
	{name: "lru_crawler knobs",
		in: "lru_crawler sleep 1000001\r\nlru_crawler sleep x\r\nlru_crawler sleep\r\nlru_crawler tocrawl -1\r\nlru_crawler tocrawl x\r\n" +
			"lru_crawler tocrawl 5\r\nlru_crawler sleep 10\r\nlru_crawler sleep 1000000\r\n",
		want: lines("CLIENT_ERROR sleep must be one second or less", "CLIENT_ERROR bad command line format", "ERROR",
			"CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "OK", "OK", "OK")},
	{name: "lru_crawler crawl", in: "lru_crawler crawl 1,,2\r\n", want: lines("OK")},
	// A release build has no debugtime; gocached needs --debug-time.
	{name: "debugtime off", in: "debugtime 5\r\ndebugtime p\r\n", want: lines("ERROR", "ERROR")},
	// memcached's crawler thread stops asynchronously: until it has, a crawl
	// gets "ERROR an unknown error happened"; gocached's answer is the one
	// memcached settles on.
	{name: "lru_crawler disable", in: "lru_crawler disable\r\nlru_crawler crawl 1\r\nlru_crawler metadump all\r\nlru_crawler disable\r\n",
		want: lines("OK", "CLIENT_ERROR lru crawler disabled", "CLIENT_ERROR lru crawler disabled", "OK"), own: true},
	// memcached hands a metadump's connection to its crawler thread and
	// drops what was pipelined after it; gocached goes on with it.
	{name: "metadump then more", in: "lru_crawler metadump all\r\nversion\r\n", want: "OK\r\nEND\r\nVERSION 1.6.18\r\n", own: true, since: "1.6.43"},
	{name: "metadump all empty", in: "lru_crawler metadump all\r\n", want: "OK\r\nEND\r\n", since: "1.6.43"},
	{name: "metadump class empty", in: "lru_crawler metadump 63\r\n", want: "OK\r\nEND\r\n", since: "1.6.43"},
	{name: "metadump hash empty", in: "lru_crawler metadump hash\r\n", want: "OK\r\nEND\r\n", since: "1.6.43"},
	{name: "metadump bad class", in: "lru_crawler metadump 0\r\nlru_crawler metadump ,\r\n",
		want: lines("BADCLASS invalid class id", "ERROR cannot pipeline other commands before metadump")},
	{name: "metadump after set", in: "set x 0 0 1\r\nx\r\nlru_crawler metadump all\r\n",
		want: lines("STORED", "ERROR cannot pipeline other commands before metadump")},
	{name: "watch after mg", in: "mg x v\r\nwatch\r\n", want: lines("EN", "ERROR cannot pipeline other commands before watch")},
	{name: "metadump no class", in: "lru_crawler metadump ,\r\n", want: lines("NOTSTARTED no items to crawl")},
	{name: "metadump pipelined", in: "version\r\nlru_crawler metadump all\r\n",
		want: lines("VERSION 1.6.18", "ERROR cannot pipeline other commands before metadump")},
	{name: "slabs", in: "slabs automove 0\r\nslabs automove 2\r\nslabs automove 3\r\nslabs automove x\r\nslabs automove\r\nslabs automove ratio 0.5\r\n" +
		"slabs automove ratio\r\nslabs automove ratio x y\r\nslabs automove 1 noreply\r\nslabs automove 9 noreply\r\n" +
		"slabs reassign 1 2\r\nslabs reassign 1 1\r\nslabs reassign x 2\r\nslabs reassign 99 2\r\nslabs reassign 1 -5\r\n" +
		"slabs reassign -1 2\r\nslabs reassign 1\r\nslabs\r\nslabs x\r\nslabs reassign 1 2 noreply\r\n", want: "OK\r\nOK\r\nERROR\r\nCLIENT_ERROR bad command line format\r\nERROR\r\nOK\r\nERROR\r\nERROR\r\nNOSPARE source class has no spare pages\r\nSAME src and dst class are identical\r\nCLIENT_ERROR bad command line format\r\nBADCLASS invalid src or dst class id\r\nBADCLASS invalid src or dst class id\r\nBADCLASS invalid src or dst class id\r\nERROR\r\nERROR\r\nERROR\r\n", since: "1.6.40"},
	{name: "lru",
		in: "lru tune 10 20 0.1 2\r\nlru tune 50 40 0.1 2\r\nlru tune 10 20 0 2\r\nlru tune x 20 0.1 2\r\nlru mode flat\r\n" +
			"lru mode segmented\r\nlru mode x\r\nlru temp_ttl 10\r\nlru temp_ttl -1\r\nlru temp_ttl x\r\nlru\r\nlru x\r\nlru mode\r\n" +
			"lru tune 1 2 3\r\nlru mode flat noreply\r\nlru mode x noreply\r\n",
		want: lines("OK", "ERROR hot and warm pcts must not exceed 80", "ERROR hot/warm age factors must be greater than 0", "ERROR",
			"OK", "OK", "ERROR", "OK", "OK", "ERROR", "ERROR", "ERROR", "ERROR", "ERROR")},
	{name: "cache_memlimit",
		in: "cache_memlimit 7\r\ncache_memlimit 1000000001\r\ncache_memlimit x\r\ncache_memlimit\r\ncache_memlimit 1 2 3\r\n" +
			"cache_memlimit -1\r\ncache_memlimit 8 noreply\r\ncache_memlimit 8 x\r\ncache_memlimit 8\r\n",
		want: lines("MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m", "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes",
			"ERROR", "ERROR", "ERROR", "ERROR", "OK", "OK")},
	// memcached 1.6.45 reads these numbers strictly (mc_toktou32,
	// mc_tokto32): no wrap at 2^32, no '+'.
	{name: "admin numbers strict",
		in: "cache_memlimit 4294967396\r\ncache_memlimit +100\r\nlru_crawler tocrawl 4294967301\r\n" +
			"lru_crawler sleep +5\r\nstats cachedump 4294967297 1\r\nstats cachedump 1 4294967297\r\n" +
			"slabs reassign 4294967297 2\r\nlru tune 4294967306 20 0.1 2.0\r\nlru tune +10 20 0.1 2.0\r\n" +
			"lru temp_ttl 4294967396\r\n",
		want: lines("ERROR", "ERROR", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format",
			"CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format",
			"CLIENT_ERROR bad command line format", "ERROR", "ERROR", "ERROR"), since: "1.6.40"},
	{name: "stats subcommand errors",
		in: "stats cachedump\r\nstats cachedump 1\r\nstats cachedump x 1\r\nstats cachedump 64 1\r\nstats cachedump 63 1\r\n" +
			"stats cachedump 1 1 1\r\nstats extstore\r\nstats extstore x\r\nstats detail\r\n",
		want: lines("CLIENT_ERROR bad command line", "CLIENT_ERROR bad command line", "CLIENT_ERROR bad command line format",
			"CLIENT_ERROR Illegal slab id", "END", "END", "END", "END", "CLIENT_ERROR usage: stats detail on|off|dump")},
	// memcached lists only items its LRU maintainer has moved to the cold
	// LRU, a moment after they were stored; gocached lists them at once.
	{name: "cachedump", in: "set foo 5 0 3\r\nbar\r\nstats cachedump 1 0\r\nstats cachedump 1 1\r\nstats cachedump 2 0\r\n",
		want: lines("STORED", "ITEM foo [3 b; 0 s]", "END", "ITEM foo [3 b; 0 s]", "END", "END"), own: true},
	// A key holding a NUL: memcached prints it as a C string, up to the NUL.
	{name: "cachedump nul key", in: "set n\x00k 0 0 1\r\nx\r\nstats cachedump 1 0\r\n",
		want: lines("STORED", "ITEM n [1 b; 0 s]", "END"), own: true},
	{name: "stats detail dump",
		in: "stats detail on\r\nset p:1 0 0 1\r\nx\r\nget p:1 q:2 p:3\r\ndelete p:1\r\nset zz 0 0 1\r\nx\r\nadd p:2 0 0 1\r\nx\r\n" +
			"stats detail dump\r\nstats detail off\r\nget p:1\r\nstats detail dump\r\nstats reset\r\nstats detail dump\r\n",
		want: lines("OK", "STORED", "VALUE p:1 0 1", "x", "END", "DELETED", "STORED", "STORED",
			"PREFIX p get 2 hit 1 set 2 del 1", "PREFIX q get 1 hit 0 set 0 del 0", "END", "OK", "END",
			"PREFIX p get 2 hit 1 set 2 del 1", "PREFIX q get 1 hit 0 set 0 del 0", "END", "RESET", "END")},
	{name: "extstore",
		in: "extstore item_size 100\r\nextstore\r\nextstore x\r\nextstore max_frag 0.5\r\nextstore free_memchunks 1 2\r\n" +
			"extstore free_memchunks 64 2\r\nextstore drop_unread x\r\nextstore item_size\r\nextstore foo 1\r\n" +
			"extstore item_size 1 noreply\r\nextstore item_size 512\r\nextstore free_memchunks 1\r\n",
		want: lines("OK", "ERROR", "ERROR", "OK", "OK", "ERROR", "ERROR", "ERROR", "ERROR", "OK", "ERROR")},
	{name: "watch errors", in: "watch foo\r\nwatch mutations noreply\r\nwatch foo noreply\r\nversion\r\n", want: "ERROR\r\nERROR cannot pipeline other commands before watch\r\nERROR cannot pipeline other commands before watch\r\nVERSION 1.6.18\r\n", since: "1.6.40"},
	{name: "shutdown off", in: "shutdown\r\nshutdown graceful\r\nshutdown x\r\n", want: "SERVER_ERROR: shutdown not enabled\r\nSERVER_ERROR: shutdown not enabled\r\nSERVER_ERROR: shutdown not enabled\r\n", since: "1.6.40"},
	{name: "verbosity levels", in: "verbosity 5\r\nverbosity 0\r\nverbosity -1\r\n", want: lines("OK", "OK", "CLIENT_ERROR bad command line format")},
}

// restoreAdmin puts memcached's admin settings back to its defaults.
const restoreAdmin = "cache_memlimit 64\r\nslabs automove 1\r\nslabs automove ratio 0.8\r\nlru tune 20 40 0.2 2\r\n" +
	"lru mode segmented\r\nlru temp_ttl -1\r\nlru_crawler sleep 100\r\nlru_crawler tocrawl 0\r\nstats detail off\r\n" +
	"extstore item_size 512\r\nextstore max_frag 0.8\r\nverbosity 0\r\n"

func TestAdminScripts(t *testing.T) {
	for _, sc := range adminScripts {
		t.Run(sc.name, func(t *testing.T) {
			checkResult(t, sc, drive(t, NewSession(newSmallEnv(t)), []byte(sc.in)), "whole")
		})
	}
}

// batchDependent names the scripts whose replies depend on what arrived in
// one read, in memcached as in gocached: metadump and watch refuse to start
// behind replies of the same batch.
var batchDependent = map[string]bool{"metadump bad class": true, "metadump pipelined": true, "lru_crawler errors": true, "watch errors": true,
	"metadump after set": true, "watch after mg": true}

// TestAdminScriptsSplit feeds each admin script split at every byte.
func TestAdminScriptsSplit(t *testing.T) {
	t.Parallel()
	for _, sc := range adminScripts {
		if batchDependent[sc.name] {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			in := []byte(sc.in)
			whole := driveFresh(t, newTinyEnv, in)
			for i := 1; i < len(in); i++ {
				got := driveFresh(t, newTinyEnv, in[:i], in[i:])
				if cutsMayDiffer(got, whole) {
					continue // the whole run is checked (TestAdminScripts)
				}
				checkResult(t, sc, got, "split at "+strconv.Itoa(i))
				if t.Failed() {
					return
				}
			}
		})
	}
}

func TestAdminScriptsAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, sc := range adminScripts {
		if sc.own || sc.since != "" {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			var got result
			// memcached's crawler is a thread of its own: a metadump may
			// wait for a crawl still running, so a mismatch is retried
			// until the crawler has settled (at most memcachedWait).
			for deadline := time.Now().Add(memcachedWait); ; {
				flushMemcached(t, addr)
				exchange(t, addr, "stats reset\r\n", len("RESET\r\n"))
				got = exchangeWant(t, addr, sc.in, len(sc.want), sc.closed)
				if normalizeCAS(got.out) == sc.want && got.closed == sc.closed || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			checkResult(t, sc, got, "memcached")
			exchangeUntil(t, addr, restoreAdmin+"mn\r\n", "MN\r\n")
			ensureCrawler(t, addr)
		})
	}
}

// ensureCrawler turns memcached's LRU crawler back on after a script
// disabled it: its thread stops asynchronously, and enabling it fails until
// it has.
func ensureCrawler(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(memcachedWait)
	for time.Now().Before(deadline) {
		if memcachedSetting(t, addr, "lru_crawler") == "yes" {
			return
		}
		exchange(t, addr, "lru_crawler enable\r\n", 4)
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("memcached's LRU crawler did not come back")
}

// memcachedSetting reads one value of `stats settings`.
func memcachedSetting(t *testing.T, addr, name string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	vals, err := testproc.Stats(c, "settings")
	if err != nil {
		t.Fatal(err)
	}
	return vals[name]
}

// TestSlabsReassignDisabled: under -o no_slab_reassign (or no_modern)
// memcached 1.6.18 answers every `slabs reassign` with "CLIENT_ERROR slab
// reassignment disabled", before it reads the class ids; with the mover on
// (the default) a valid pair gets NOSPARE.
func TestSlabsReassignDisabled(t *testing.T) {
	in := []byte("slabs reassign 1 2\r\nslabs reassign x 2\r\nslabs reassign 1 1\r\nslabs reassign 1\r\n")
	for _, tc := range []struct {
		reassign bool
		want     string
	}{
		{true, lines("NOSPARE source class has no spare pages", "CLIENT_ERROR bad command line format",
			"SAME src and dst class are identical", "ERROR")},
		{false, lines("CLIENT_ERROR slab reassignment disabled", "CLIENT_ERROR slab reassignment disabled",
			"CLIENT_ERROR slab reassignment disabled", "ERROR")},
	} {
		env := newSmallEnv(t)
		tu := DefaultTuning()
		tu.SlabReassign = tc.reassign
		env.Settings.Tuning = &tu
		if got := drive(t, NewSession(env), in).out; got != tc.want {
			t.Errorf("slab_reassign %v: got %q, want %q", tc.reassign, got, tc.want)
		}
	}
}
