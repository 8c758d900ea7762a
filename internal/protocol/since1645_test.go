package protocol

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/refmc"
	"github.com/gocached/gocached/internal/testproc"
)

// Replies where memcached 1.6.45 differs from 1.6.18, the release the other
// script tables are checked against. Each row names the release that
// changed the reply. TestSince1645AgainstMemcached checks every row against
// memcached 1.6.45 (startRefMemcached).

// refEnv, when set, names a memcached 1.6.45 binary to check against
// instead of the one built from Debian's source package.
const refEnv = "GOCACHED_MEMCACHED_REF"

// refBuildLimit bounds building memcached 1.6.45 (fetching Debian's source
// package and compiling it: a minute or two on a quiet 2-CPU machine, and
// nothing once the test cache holds the build).
const refBuildLimit = 10 * time.Minute

// refBuild builds it once per test binary; a failure is kept, so that
// every test reports it without building again.
var refBuild = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv(refEnv); bin != "" {
		return bin, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), refBuildLimit)
	defer cancel()
	return refmc.Current.Binary(ctx)
})

// textSince1645 are text-protocol rows, compared as the scripts table is.
var textSince1645 = []script{
	// 1.6.40's parser: an empty cas line is refused once its length is
	// known, and its data block swallowed (t/cas.t).
	{name: "cas without unique", in: "cas foo 0 0 6 \r\nbarva2\r\nmn\r\n", want: lines("CLIENT_ERROR bad command line format", "MN"), since: "1.6.40"},
	{name: "cas missing unique", in: "cas a 0 0 1\r\nx\r\n", want: lines("CLIENT_ERROR bad command line format"), since: "1.6.40"},
	{name: "cas unique strict", in: "cas a 0 0 1 +1\r\nx\r\ncas a 0 0 1 -1\r\nx\r\ncas a 0 0 1 1\r\nx\r\n", want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "NOT_FOUND"), since: "1.6.40"},
	{name: "blank lines", in: "\r\n \n \r\n\n", want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format"), since: "1.6.40"},
	{name: "short lines", in: "a\r\nab\nab\r\n   \r\n", want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "ERROR", "ERROR"), since: "1.6.40"},
	{name: "storage too few tokens", in: "set a 0 0\r\nx\r\nadd\r\n", want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format"), since: "1.6.40"},
	{name: "storage extra tokens", in: "set a 0 0 1 2 3\r\nx\r\nget a\r\n", want: lines("STORED", "VALUE a 0 1", "x", "END"), since: "1.6.40"},
	{name: "storage length strict", in: "set a 0 0 +1\r\nx\r\nset a 0 0 4294967297\r\nx\r\n", want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format"), since: "1.6.40"},
	{name: "storage bad key swallows", in: "set " + k251 + " 0 0 1\r\nx\r\nmn\r\n", want: lines("CLIENT_ERROR bad command line format", "MN"), since: "1.6.40"},
	{name: "storage bad flags swallows", in: "set a x 0 1\r\nx\r\nset a 0 x 1 noreply\r\nx\r\nmn\r\n", want: lines("CLIENT_ERROR bad command line format", "MN"), since: "1.6.40"},
	{name: "incr decr touch arity", in: "incr a\r\ndecr\r\ntouch a\r\nset a 0 0 1\r\n5\r\nincr a 2 junk\r\ntouch a 0 junk\r\n", want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "STORED", "7", "TOUCHED"), since: "1.6.40"},
	{name: "incr delta strict", in: "set a 0 0 1\r\n5\r\nincr a +1\r\nincr a 18446744073709551616\r\n", want: lines("STORED", "CLIENT_ERROR invalid numeric delta argument", "CLIENT_ERROR invalid numeric delta argument"), since: "1.6.40"},
	{name: "delete any tokens", in: "delete\r\nset a 0 0 1\r\nx\r\ndelete a 0\r\nset a 0 0 1\r\nx\r\ndelete a junk\r\ndelete a 0 noreply\r\nmn\r\n", want: lines("CLIENT_ERROR bad command line format", "STORED", "DELETED", "STORED", "DELETED", "MN"), since: "1.6.40"},
	{name: "get without key", in: "get\r\ngets\r\ngat 10\r\ngat\r\n", want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format"), since: "1.6.40"},
	{name: "leading space", in: " get a\r\n mn\r\n version\r\n", want: lines("ERROR", "ERROR", "ERROR"), since: "1.6.40"},
	{name: "http on any command", in: "gx / HTTP/1.1\r\n", want: "", closed: true, since: "1.6.40"},
	{name: "shutdown disabled", in: "shutdown\r\n", want: lines("SERVER_ERROR: shutdown not enabled"), since: "1.6.40"},
	{name: "verbosity strict", in: "verbosity\r\nverbosity +1\r\nverbosity 1 2\r\n", want: lines("CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format", "OK"), since: "1.6.40"},
	{name: "sizes switches gone", in: "stats sizes_enable\r\nstats sizes_disable\r\nstats sizes\r\n", want: lines("ERROR", "ERROR", "STAT sizes_status disabled", "END"), since: "1.6.25"},
	{name: "flush_all strict", in: "flush_all +1\r\nflush_all 0 junk\r\n", want: lines("CLIENT_ERROR invalid exptime argument", "OK"), since: "1.6.40"},
}

// metaSince1645 are meta-protocol rows, compared as the meta table is.
var metaSince1645 = []script{
	// t/metaget.t's blank command, and a meta line without its key.
	{name: "meta blank", in: " \n", want: "CLIENT_ERROR bad command line format\r\n", since: "1.6.40"},
	{name: "meta no key", in: "mg\r\nmd\r\nma\r\nms\r\nms a\r\nmn\n", want: "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\n", since: "1.6.40"},
	{name: "meta refused flag byte", in: "mg a !\r\nms a 1 !\r\nx\r\n", want: "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\n", since: "1.6.40"},
	{name: "ms s", in: "ms a 1 s\r\n1\r\nms a 1 c s k Ox\r\n1\r\n", want: "HD s1\r\nHD cC s1 ka Ox\r\n", since: "1.6.20"},
	{name: "ms append vivify", in: "ms v 2 MA N30\r\nmo\r\nmg v s v\r\nms v 2 MA N30 s\r\nko\r\nmg v v\r\n", want: "HD\r\nVA 2 s2\r\nmo\r\nHD s4\r\nVA 4\r\nmoko\r\n", since: "1.6.20"},
	{name: "ms append cas miss", in: "ms ac 2 MA C5000 T30\r\nhi\r\nms ac 2 MA T30\r\nhi\r\n", want: "NS\r\nNS\r\n", since: "1.6.20"},
	{name: "ms prepend vivify", in: "ms p 1 MP N0 F5\r\nb\r\nms p 1 MP N0\r\na\r\nmg p v f\r\n", want: "HD\r\nHD\r\nVA 2 f5\r\nab\r\n", since: "1.6.20"},
	{name: "ms M length", in: "ms a 1 M\r\nx\r\nms a 1 MSS\r\ny\r\nmg a v\r\n", want: "CLIENT_ERROR invalid mode for ms M token\r\nHD\r\nVA 1\r\ny\r\n", since: "1.6.40"},
	{name: "mg C masks value", in: "ms a 2 E77\r\nva\r\nmg a C77 v c\r\nmg a C78 v c\r\n", want: "HD\r\nHD cC\r\nVA 2 cC\r\nva\r\n", since: "1.6.40"},
	{name: "md x", in: "ms a 2 T50 F3\r\nmx\r\nmg a c\r\nmd a x\r\nmg a v f t c\r\n", want: "HD\r\nHD cC\r\nHD\r\nVA 0 f0 t-1 cC\r\n\r\n", since: "1.6.27"},
	{name: "md x keeps cas", in: "ms a 2 E500\r\nmx\r\nmd a x\r\nmg a C500 v\r\nmd a x E600 F4\r\nmg a C600 v f\r\nmg a C500 v\r\n", want: "HD\r\nHD\r\nHD\r\nHD\r\nHD f4\r\nVA 0\r\n\r\n", since: "1.6.27"},
	{name: "md x I", in: "ms a 2 T50\r\nmz\r\nmd a x I\r\nmg a t v\r\n", want: "HD\r\nHD\r\nVA 0 t-1 X W\r\n\r\n", since: "1.6.27"},
	{name: "md x miss cas", in: "md a x\r\nms a 1 E9\r\nx\r\nmd a x C8\r\nmd a x C9 q\r\nmn\r\n", want: "NF\r\nHD\r\nEX\r\nMN\r\n", since: "1.6.27"},
	{name: "meta too many flags", in: "md a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\r\nma a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\r\n", want: "CLIENT_ERROR options flags are too long\r\nCLIENT_ERROR invalid or duplicate flag\r\n", since: "1.6.40"},
}

func TestSince1645Scripts(t *testing.T) {
	for _, sc := range textSince1645 {
		t.Run(sc.name, func(t *testing.T) { checkResult(t, sc, runScript(t, sc.in), "whole") })
	}
	for _, sc := range metaSince1645 {
		t.Run(sc.name, func(t *testing.T) { checkMeta(t, sc, runScript(t, sc.in), "whole") })
	}
}

// TestSince1645ScriptsSplit feeds each row split at every byte.
func TestSince1645ScriptsSplit(t *testing.T) {
	for _, sc := range append(append([]script(nil), textSince1645...), metaSince1645...) {
		in := []byte(sc.in)
		whole := runScript(t, sc.in)
		for i := 1; i < len(in); i++ {
			got := driveFresh(t, newTestEnv, in[:i], in[i:])
			if !cutsMayDiffer(got, whole) && got.out != whole.out {
				t.Errorf("%s split at %d:\n got: %q\nwant: %q", sc.name, i, got.out, whole.out)
			}
		}
	}
}

func TestSince1645AgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startRefMemcached(t)
	for _, sc := range textSince1645 {
		t.Run(sc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			checkResult(t, sc, exchangeWant(t, addr, sc.in, len(sc.want), sc.closed), "memcached 1.6.45")
		})
	}
	for _, sc := range metaSince1645 {
		t.Run(sc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			checkMeta(t, sc, exchangeWant(t, addr, sc.in, len(sc.want), sc.closed), "memcached 1.6.45")
		})
	}
	// The rows of the older tables that carry a 1.6.45 reply.
	for _, sc := range scripts {
		if sc.since == "" {
			continue
		}
		t.Run("scripts/"+sc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			got := exchangeWant(t, addr, sc.in, len(sc.want), sc.closed)
			got.out = strings.ReplaceAll(got.out, "VERSION 1.6.45", "VERSION 1.6.18")
			checkResult(t, sc, got, "memcached 1.6.45")
		})
	}
	for _, sc := range metaScripts {
		if sc.since == "" {
			continue
		}
		t.Run("meta/"+sc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			checkMeta(t, sc, exchangeWant(t, addr, sc.in, len(sc.want), sc.closed), "memcached 1.6.45")
		})
	}
}

// startRefMemcached starts memcached 1.6.45 (refBuild), as startMemcached
// starts Debian's 1.6.18. A build that cannot be made (no compiler, no
// archive) skips the test, or fails it under GOCACHED_REQUIRE_TESTBED=1.
func startRefMemcached(t *testing.T, extra ...string) string {
	t.Helper()
	bin, err := refBuild()
	if err != nil {
		if testproc.Required() {
			t.Fatalf("memcached %s not built: %v (and %s=1)", refmc.Current.Version, err, testproc.RequireEnv)
		}
		t.Skipf("memcached %s not built (%v): replies not re-checked against it", refmc.Current.Version, err)
	}
	return startMemcachedBin(t, bin, nil, extra...).Addr()
}

// binSince1645 are binary rows: want is describePackets of the reply.
var binSince1645 = []binScript{
	// 229cf41 (1.6.42): a body over 1 GiB is refused from its header.
	{name: "body over 1 GiB", in: rawHeader(opSet, 1, 8, 1<<30+1, 7) + setExt(0, 0) + "k",
		want: "81 00 op=01 st=04 ext= key=\"\" val=\"Invalid arguments\" opq=00000007 cas=0\nclosed\n"},
	// 1.6.25 removed the run-time switches of the size histogram: unknown
	// groups.
	{name: "stat sizes switch", in: binReq(opStat, "sizes_enable", "", "", 1, 0) + binReq(opStat, "sizes", "", "", 2, 0) +
		binReq(opStat, "sizes_disable", "", "", 3, 0) + binReq(opNoop, "", "", "", 4, 0),
		want: "81 00 op=10 st=01 ext= key=\"\" val=\"Not found\" opq=00000001 cas=0\n" +
			"81 00 op=10 st=00 ext= key=\"sizes_status\" val=\"disabled\" opq=00000002 cas=0\n" +
			"81 00 op=10 st=00 ext= key=\"\" val=\"\" opq=00000002 cas=0\n" +
			"81 00 op=10 st=01 ext= key=\"\" val=\"Not found\" opq=00000003 cas=0\n" +
			"81 00 op=0a st=00 ext= key=\"\" val=\"\" opq=00000004 cas=0\n"},
	// At the limit: the get's own framing check refuses it, as before.
	{name: "body of 1 GiB", in: rawHeader(opGet, 1, 0, 1<<30, 7) + "k" + binReq(opNoop, "", "", "", 8, 0),
		want: "81 00 op=00 st=04 ext= key=\"\" val=\"Invalid arguments\" opq=00000007 cas=0\nclosed\n"},
}

func TestSince1645Binary(t *testing.T) {
	for _, sc := range binSince1645 {
		got := runBinary(t, sc.in)
		if g := describePackets(got.out, got.closed); g != sc.want {
			t.Errorf("%s:\n got: %s\nwant: %s", sc.name, g, sc.want)
		}
	}
}

func TestSince1645BinaryAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startRefMemcached(t)
	for _, sc := range binSince1645 {
		ref := exchangeWant(t, addr, sc.in, max(1, len(sc.want)), strings.HasSuffix(sc.want, "closed\n"))
		if g := describePackets(ref.out, ref.closed); g != sc.want {
			t.Errorf("%s: memcached 1.6.45:\n%swant:\n%s", sc.name, g, sc.want)
		}
	}
}
