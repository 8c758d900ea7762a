package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// These tests drive real binary-protocol clients: the ones that failed
// silently or fatally against a text-only server. Each script asserts every
// result and prints "ok N ..."; they run against every engine and against
// Debian's memcached, which they must pass too.

// clientScript runs one client script to completion with a time bound.
func clientScript(t *testing.T, interp, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, interp, append([]string{"testdata/" + script}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", interp, script, err, out)
	}
	last := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	if !strings.HasPrefix(last, "ok ") {
		t.Fatalf("%s printed %q, want \"ok N ...\"", script, out)
	}
	return last
}

// interpreterWith returns interp when it can load module, else skips (or
// fails under GOCACHED_REQUIRE_TESTBED=1) naming the Debian package.
func interpreterWith(t *testing.T, interp string, probe []string, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(interp)
	if err == nil {
		err = testproc.Command(path, probe...).Run()
	}
	if err != nil {
		missing(t, "%s cannot load the client library (Debian package: %s): %v", interp, pkg, err)
	}
	return path
}

// TestDalliBinary runs Ruby's Dalli 3.0.6 (binary protocol only; Rails'
// cache store sits on it).
func TestDalliBinary(t *testing.T) {
	ruby := interpreterWith(t, "ruby", []string{"-e", `require "dalli"`}, "ruby-dalli")
	forEachTarget(t, func(t *testing.T, tg target) {
		srv := startServer(t, tg)
		t.Log(clientScript(t, ruby, "dalli_client.rb", "127.0.0.1:"+strconv.Itoa(srv.Port())))
	})
}

// TestPylibmcBinary runs libmemcached in binary mode through pylibmc.
func TestPylibmcBinary(t *testing.T) {
	py := interpreterWith(t, "/usr/bin/python3", []string{"-c", "import pylibmc"}, "python3-pylibmc")
	forEachTarget(t, func(t *testing.T, tg target) {
		srv := startServer(t, tg)
		t.Log(clientScript(t, py, "pylibmc_binary_client.py", "127.0.0.1", strconv.Itoa(srv.Port())))
	})
}

// TestPHPMemcachedBinary runs PHP's memcached extension with
// OPT_BINARY_PROTOCOL (its session handler's default).
func TestPHPMemcachedBinary(t *testing.T) {
	php := interpreterWith(t, "php", []string{"-r", `exit(class_exists("Memcached") ? 0 : 1);`}, "php-cli php-memcached")
	checkPHPSession(t, php, "testdata/php_session_binary.php")
}

// TestLibmemcachedToolsBinary runs libmemcached's tools with --binary,
// which against a text-only server failed silently (misses, a flush that
// flushed nothing).
func TestLibmemcachedToolsBinary(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		srv := startServer(t, tg)
		servers := "--servers=127.0.0.1:" + strconv.Itoa(srv.Port())
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f1.txt"), []byte("hello binary\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, code := tool(t, dir, "memccp", "--binary", servers, "f1.txt"); code != 0 {
			t.Fatalf("memccp: %d %s", code, out)
		}
		if out, code := tool(t, dir, "memccat", "--binary", servers, "f1.txt"); code != 0 || out != "hello binary\n\n" { // memccat adds a newline
			t.Errorf("memccat after memccp: %d %q", code, out)
		}
		if out, code := tool(t, dir, "memcstat", "--binary", servers); code != 0 || !strings.Contains(out, "curr_items: 1") {
			t.Errorf("memcstat: %d\n%s", code, out)
		}
		if out, code := tool(t, dir, "memcflush", "--binary", servers); code != 0 {
			t.Errorf("memcflush: %d %s", code, out)
		}
		if out, code := tool(t, dir, "memccat", "--binary", servers, "f1.txt"); code == 0 {
			t.Errorf("memccat after memcflush found the key: %q", out)
		}
		tool(t, dir, "memccp", "--binary", servers, "f1.txt")
		if out, code := tool(t, dir, "memcrm", "--binary", servers, "f1.txt"); code != 0 {
			t.Errorf("memcrm: %d %s", code, out)
		}
		if out, code := tool(t, dir, "memccat", "--binary", servers, "f1.txt"); code == 0 {
			t.Errorf("memccat after memcrm found the key: %q", out)
		}
	})
}
