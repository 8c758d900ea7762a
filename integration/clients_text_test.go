package integration

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// Text-protocol clients with their own wire code (not libmemcached): PHP's
// older Memcache class and Perl's Cache::Memcached::Fast. Each script
// asserts its results and prints one line per check; the test runs it on
// memcached first and then requires every engine's transcript to be the
// same, so a result the script does not pin down (a stats name, a value
// returned where false was expected) still cannot differ unnoticed.

// compareTranscripts runs run against memcached and then every engine,
// failing an engine whose transcript differs from memcached's.
func compareTranscripts(t *testing.T, run func(t *testing.T, addr string) string) {
	var ref string
	tgs := append([]target{referenceTarget}, engineTargets...)
	runTargets(t, tgs, func(t *testing.T, tg target) {
		if !tg.isReference() {
			// The engines wait until memcached's run (not parallel, so
			// first) has set ref, then share the scripts' sleeps.
			t.Parallel()
		}
		srv := startServer(t, tg)
		addr := "127.0.0.1:" + strconv.Itoa(srv.Port())
		// The clients key some results by server address, which is the
		// one thing that must differ.
		got := strings.ReplaceAll(run(t, addr), addr, "SERVER")
		if tg.isReference() {
			ref = got
			return
		}
		if ref == "" {
			t.Log("no memcached transcript to compare with (memcached not run)")
			return
		}
		if got != ref {
			t.Errorf("transcript differs from memcached's:\n%s", diffLines(ref, got))
		}
	})
}

// runScript runs interp script args with a time bound and returns its
// output minus the final "ok N checks" line, failing t when the script
// exits non-zero or does not end with that line.
func runScript(t *testing.T, interp, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := testproc.CommandContext(ctx, interp, append([]string{"testdata/" + script}, args...)...).Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", interp, script, err, out, stderr)
	}
	body := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(body, '\n')
	if i < 0 || !strings.HasPrefix(body[i+1:], "ok ") {
		t.Fatalf("%s printed %q, want a transcript ending in \"ok N checks\"", script, out)
	}
	t.Log(body[i+1:])
	return body[:i]
}

// diffLines shows the lines of got that differ from want, by position
// (the scripts are linear, so lines align).
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("  memcached: " + abbreviate(wl) + "\n  gocached:  " + abbreviate(gl) + "\n")
		}
	}
	return b.String()
}

// phpWithMemcache returns php when it has the Memcache class (php-memcache),
// which is a different extension from php-memcached's Memcached class.
func phpWithMemcache(t *testing.T) string {
	return interpreterWith(t, "php", []string{"-r", `exit(class_exists("Memcache") ? 0 : 1);`}, "php-cli php-memcache")
}

// TestPHPMemcache runs the Memcache class through every call the script
// checks (storage commands, cas, counters, typed and MEMCACHE_COMPRESSED
// values, a 512 KiB value, expiry, getStats/getExtendedStats, flush).
func TestPHPMemcache(t *testing.T) {
	php := phpWithMemcache(t)
	compareTranscripts(t, func(t *testing.T, addr string) string {
		host, port, _ := strings.Cut(addr, ":")
		return runScript(t, php, "php_memcache_client.php", host, port)
	})
}

// TestPHPMemcacheSession stores a session through php-memcache's session
// handler (text protocol, its lock item) in one process, reads it back in
// another, and finds it gone after session_destroy.
func TestPHPMemcacheSession(t *testing.T) {
	checkPHPSession(t, phpWithMemcache(t), "testdata/php_memcache_session.php")
}

// checkPHPSession writes a session with script (a php session handler
// round trip) in one process, reads it back in another, and finds it gone
// after session_destroy, on every target.
func checkPHPSession(t *testing.T, php, script string) {
	forEachTarget(t, func(t *testing.T, tg target) {
		srv := startServer(t, tg)
		addr := "127.0.0.1:" + strconv.Itoa(srv.Port())
		run := func(mode string) string {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := testproc.CommandContext(ctx, php, script, addr, mode).CombinedOutput()
			if err != nil || strings.Contains(string(out), "Warning") {
				t.Fatalf("php session %s: %v\n%s", mode, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		if got := run("write"); got != "written" {
			t.Fatalf("write: %q", got)
		}
		if got := run("read"); got != `{"user":42,"cart":["a","b"]}` {
			t.Errorf("read back %q", got)
		}
		if got := run("read"); got != "[]" {
			t.Errorf("after session_destroy: %q, want []", got)
		}
	})
}

// TestPerlMemcachedFast runs Cache::Memcached::Fast through get/set and
// the multi forms, add/replace/append/prepend, gets+cas, incr/decr,
// touch/gat/gats, delete, flush_all, server_versions, noreply and nowait
// connections and a namespace.
func TestPerlMemcachedFast(t *testing.T) {
	perl := interpreterWith(t, "perl", []string{"-MCache::Memcached::Fast", "-e", "1"}, "libcache-memcached-fast-perl")
	compareTranscripts(t, func(t *testing.T, addr string) string {
		return runScript(t, perl, "perl_memcached_fast.pl", addr)
	})
}
