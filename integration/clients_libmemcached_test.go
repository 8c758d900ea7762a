package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// tool runs a libmemcached-tools command with a deadline and returns its
// combined output and exit code (-1 when it could not run or timed out).
func tool(t *testing.T, dir string, name string, args ...string) (string, int) {
	t.Helper()
	path := requireTool(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := testproc.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out\n%s", name, strings.Join(args, " "), out)
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		t.Fatalf("%s: %v", name, err)
	}
	return string(out), 0
}

// TestLibmemcachedTools round-trips files and keys through memccp, memccat,
// memcexist, memctouch, memcrm, memcflush, memcstat and memcslap.
func TestLibmemcachedTools(t *testing.T) {
	for _, name := range []string{"memccp", "memccat", "memcrm", "memcstat", "memcslap", "memcflush", "memctouch", "memcexist"} {
		requireTool(t, name)
	}
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		srv := startServer(t, tg)
		servers := "--servers=" + srv.Addr()
		dir := t.TempDir()
		files := map[string][]byte{
			"small.txt": []byte("hello from memccp\n"),
			"binary":    bytes.Repeat([]byte{0, 1, 2, '\r', '\n', 0xff}, 1000),
			"large.bin": bytes.Repeat([]byte("libmemcached"), 80<<10), // 960 KiB
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run := func(wantCode int, name string, args ...string) string {
			t.Helper()
			out, code := tool(t, dir, name, append([]string{servers}, args...)...)
			if code != wantCode {
				t.Fatalf("%s %s: exit %d, want %d\n%s", name, strings.Join(args, " "), code, wantCode, out)
			}
			return out
		}

		for name, data := range files {
			run(0, "memccp", name)
			// memccat to stdout appends a newline; --file writes exact bytes.
			out := filepath.Join(dir, "out."+name)
			run(0, "memccat", "--file="+out, name)
			if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("memccat %s: %d bytes back (%v), want %d", name, len(got), err, len(data))
			}
			run(0, "memcexist", name)
		}
		run(0, "memccp", "--flags=1234", "--expire=100", "small.txt")
		if got := run(0, "memccat", "--flags", "small.txt"); !strings.Contains(got, "1234") {
			t.Fatalf("memccat --flags: %q, want flags 1234", got)
		}

		// --add fails on an existing key, --replace on a missing one.
		out, code := tool(t, dir, "memccp", servers, "--add", "small.txt")
		if code == 0 {
			t.Fatalf("memccp --add on an existing key succeeded:\n%s", out)
		}
		run(0, "memccp", "--replace", "small.txt")

		run(0, "memctouch", "--expire=100", "small.txt")
		run(1, "memctouch", "--expire=100", "absent-key")

		run(0, "memcrm", "small.txt")
		run(1, "memcexist", "small.txt")
		run(1, "memccat", "small.txt")

		stat := run(0, "memcstat")
		for _, field := range []string{"pid:", "uptime:", "curr_items:", "cmd_get:", "cmd_set:", "get_hits:"} {
			if !strings.Contains(stat, field) {
				t.Fatalf("memcstat output lacks %s:\n%s", field, stat)
			}
		}
		if m := regexp.MustCompile(`(?m)^\s*cmd_set: (\d+)$`).FindStringSubmatch(stat); m == nil {
			t.Fatalf("memcstat: no cmd_set:\n%s", stat)
		} else if n, _ := strconv.Atoi(m[1]); n < len(files)+2 {
			t.Fatalf("memcstat cmd_set %d, want >= %d", n, len(files)+2)
		}

		run(0, "memcflush")
		run(1, "memcexist", "binary")

		for _, test := range []string{"set", "get", "mget"} {
			out := run(0, "memcslap", "--test="+test, "--concurrency=4", "--execute-number=2000", "--initial-load=500", "--flush")
			if !strings.Contains(out, "Time total") {
				t.Fatalf("memcslap --test=%s: no summary:\n%s", test, out)
			}
		}
		// memcslap's get test must have found what its load phase stored.
		after := dialRaw(t, srv.Addr()).stats("")
		if hits, _ := strconv.Atoi(after["get_hits"]); hits < 2000 {
			t.Fatalf("after memcslap: get_hits %s, want >= 2000", after["get_hits"])
		}
	})
}

// memcapableTests splits memccapable's output at each "ascii NAME" test
// line. A failing test prints the unexpected reply inside its brackets,
// possibly across lines, so a test passed only if its segment holds "[pass]".
var (
	memcapableTest = regexp.MustCompile(`(?m)^ascii `)
	memcapableName = regexp.MustCompile(`^ascii ([a-z]+(?: [a-z]+)*)`)
)

type memcapableResult struct {
	name   string
	passed bool
	text   string
}

func parseMemcapable(out string) []memcapableResult {
	var results []memcapableResult
	starts := memcapableTest.FindAllStringIndex(out, -1)
	for i, st := range starts {
		end := len(out)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		seg := out[st[0]:end]
		name := seg
		if m := memcapableName.FindStringSubmatch(seg); m != nil {
			name = m[1]
		}
		passed := strings.Contains(seg, "[pass]") && !strings.Contains(strings.ToLower(seg), "[fail]")
		results = append(results, memcapableResult{name: name, passed: passed, text: seg})
	}
	return results
}

// memcapableFails1645 are memccapable's ASCII tests memcached 1.6.45 fails
// (as of 1.6.40: its parser no longer refuses "delete <key> <time>", it
// deletes the key), so every server that answers as it does fails them.
var memcapableFails1645 = map[string]bool{"delete": true, "delete noreply": true}

// TestMemcapable runs libmemcached's conformance checker in ASCII mode:
// every test passes but those memcached 1.6.45 fails too, and those fail.
func TestMemcapable(t *testing.T) {
	requireTool(t, "memccapable")
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		srv := startServer(t, tg)
		out, code := tool(t, "", "memccapable", "-a", "-t", "5", "-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port()))
		passed, failed := 0, 0
		for _, r := range parseMemcapable(out) {
			switch {
			case r.passed && memcapableFails1645[r.name]:
				t.Errorf("memccapable: %q passed, where memcached 1.6.45 fails it: %q", r.name, r.text)
			case r.passed:
				passed++
			case memcapableFails1645[r.name]:
				failed++
			default:
				t.Errorf("memccapable: %q failed: %q", r.name, r.text)
			}
		}
		// memccapable 1.1.4 runs 27 ASCII tests; fewer means it stopped early.
		if want := 27 - len(memcapableFails1645); passed != want || failed != len(memcapableFails1645) {
			t.Errorf("memccapable: %d tests passed and %d failed, want %d and %d", passed, failed, want, len(memcapableFails1645))
		}
		summary := fmt.Sprintf("%d of 27 tests failed", len(memcapableFails1645))
		if code == 0 || !strings.Contains(out, summary) {
			t.Errorf("memccapable exit %d, want its failure with %q; output:\n%s", code, summary, out)
		}
	})
}
