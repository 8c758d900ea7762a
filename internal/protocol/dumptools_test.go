package protocol

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

const memcachedTool = "/usr/share/memcached/scripts/memcached-tool"

// toolOrSkip finds a Debian tool, failing under GOCACHED_REQUIRE_TESTBED=1.
func toolOrSkip(t *testing.T, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if testproc.Required() {
			t.Fatalf("%s (Debian's %s) not installed and %s=1", path, pkg, testproc.RequireEnv)
		}
		t.Skipf("%s (Debian's %s) not installed", path, pkg)
	}
	return path
}

// dumpEnv serves n items over serveSessions, with metadump streamed.
func dumpEnv(t *testing.T, n int) (*Env, string) {
	env := newTestEnvMem(t, 16<<20)
	env.ResumesPending = true
	s := NewSession(env)
	for i := range n {
		drive(t, s, []byte(fmt.Sprintf("set key:%d %d 0 5 noreply\r\nv%04d\r\n", i, i%7, i%10000)))
	}
	return env, serveSessions(t, env)
}

// TestMemcachedToolDump runs memcached's own memcached-tool in its dump and
// keys modes, which read `lru_crawler metadump all`.
func TestMemcachedToolDump(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	tool := toolOrSkip(t, memcachedTool, "memcached")
	const n = 20000 // a dump of about 1.3 MB: several streamed parts
	_, addr := dumpEnv(t, n)
	out, err := testproc.Command("perl", tool, addr, "keys").Output()
	if err != nil {
		t.Fatalf("memcached-tool keys: %v", err)
	}
	if got := strings.Count(string(out), "key=key%3A"); got != n {
		t.Fatalf("memcached-tool keys listed %d keys, want %d:\n%s", got, n, abbrev(string(out)))
	}
	out, err = testproc.Command("perl", tool, addr, "dump", "50").Output()
	if err != nil {
		t.Fatalf("memcached-tool dump: %v", err)
	}
	// The tool counts the metadump's first line, the OK memcached 1.6.43
	// on sends, as one of its 50 (its 1.6.45 copy does the same).
	const dumped = 49
	if got := strings.Count(string(out), "add key:"); got != dumped {
		t.Fatalf("memcached-tool dump 50 gave %d items:\n%s", got, abbrev(string(out)))
	}
	// Every item comes back as it was stored: "add key:i i%7 0 5" and its value.
	blocks := regexp.MustCompile(`add key:(\d+) (\d+) 0 5\r\nv(\d{4})\r\n`).FindAllStringSubmatch(string(out), -1)
	if len(blocks) != dumped {
		t.Fatalf("memcached-tool dump: %d well-formed items in %q", len(blocks), abbrev(string(out)))
	}
	for _, b := range blocks {
		i, _ := strconv.Atoi(b[1])
		if b[2] != strconv.Itoa(i%7) || b[3] != fmt.Sprintf("%04d", i%10000) {
			t.Fatalf("memcached-tool dump: item %q", b[0])
		}
	}
}

// TestMemcdump runs libmemcached's memcdump, which lists keys with
// `stats items` and `stats cachedump`.
func TestMemcdump(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	tool := toolOrSkip(t, "/usr/bin/memcdump", "libmemcached-tools")
	const n = 500
	_, addr := dumpEnv(t, n)
	out, err := testproc.Command(tool, "--servers="+addr).Output()
	if err != nil {
		t.Fatalf("memcdump: %v\n%s", err, out)
	}
	keys := strings.Fields(string(out))
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	if len(seen) != n || !seen["key:0"] || !seen[fmt.Sprintf("key:%d", n-1)] {
		t.Fatalf("memcdump listed %d distinct keys, want %d: %q", len(seen), n, abbrev(string(out)))
	}
}
