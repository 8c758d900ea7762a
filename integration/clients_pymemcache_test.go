package integration

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// pythonWithPymemcache finds a python3 that can import pymemcache. Debian's
// python3-pymemcache lives under /usr/bin/python3, which a PATH python
// (pyenv, venv) may not see, so that one is tried first.
func pythonWithPymemcache(t testing.TB) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, py := range candidates {
		if _, err := os.Stat(py); err != nil {
			continue
		}
		if testproc.Command(py, "-c", "import pymemcache.client.base").Run() == nil {
			return py
		}
	}
	missing(t, "no python3 can import pymemcache (Debian package: python3-pymemcache)")
	return ""
}

// TestPymemcache runs testdata/pymemcache_client.py, which exercises every
// method of pymemcache.client.base.Client and asserts the results.
func TestPymemcache(t *testing.T) {
	py := pythonWithPymemcache(t)
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		srv := startServer(t, tg)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := testproc.CommandContext(ctx, py, "testdata/pymemcache_client.py", "127.0.0.1", strconv.Itoa(srv.Port()))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pymemcache script: %v\n%s", err, out)
		}
		if !strings.HasPrefix(string(out), "ok ") {
			t.Fatalf("pymemcache script printed %q, want \"ok N checks\"", out)
		}
		t.Logf("%s", strings.TrimSpace(string(out)))
	})
}
