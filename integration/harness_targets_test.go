package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/refmc"
	"github.com/gocached/gocached/internal/testproc"
)

// target is one kind of server a suite can run against.
type target struct {
	name   string // subtest name: "go", "epoll", "memcached"
	engine string // gocached --engine value; "" for the memcached reference
}

func (tg target) isReference() bool { return tg.engine == "" }

var (
	engineTargets   = []target{{name: "go", engine: "go"}, {name: "epoll", engine: "epoll"}, {name: "uring", engine: "uring"}}
	referenceTarget = target{name: "memcached"}
)

// requireTestbed reports whether missing tools must fail the run (CI).
func requireTestbed() bool { return testproc.Required() }

// missing skips t, or fails it when the testbed is required.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if requireTestbed() {
		t.Fatalf("%s (GOCACHED_REQUIRE_TESTBED=1)", msg)
	}
	t.Skip(msg)
}

// requireTool returns the path of an executable or skips/fails t.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, "%s not installed (Debian package: %s)", name, debianPackage(name))
	}
	return p
}

// referenceBuildLimit bounds getting the reference memcached: fetching
// Debian's source package and compiling it takes a minute or two on a
// quiet 2-CPU machine, and nothing once the test cache holds the build
// (test.sh builds it before the stages start).
const referenceBuildLimit = 10 * time.Minute

// referenceBuild builds memcached 1.6.45 once per test binary; a failure
// is kept, so that every test reports it without building again.
var referenceBuild = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), referenceBuildLimit)
	defer cancel()
	return refmc.Current.Binary(ctx)
})

// referenceMemcached returns the reference memcached, the release whose
// behaviour gocached follows (refmc.Current), built from Debian's source
// package into the test cache; a build that cannot be made (no compiler,
// no archive) skips t, or fails it when the testbed is required. Tests
// about Debian 12's memcached 1.6.18 itself use requireTool("memcached").
func referenceMemcached(t testing.TB) string {
	t.Helper()
	bin, err := referenceBuild()
	if err != nil {
		missing(t, "memcached %s not built from Debian's source package: %v", refmc.Current.Version, err)
	}
	return bin
}

func debianPackage(tool string) string {
	switch {
	case tool == "memcached":
		return "memcached"
	case strings.HasPrefix(tool, "memc"):
		return "libmemcached-tools"
	case tool == "saslpasswd2":
		return "sasl2-bin"
	case tool == "setpriv", tool == "prlimit":
		return "util-linux"
	}
	return tool
}

// wantTarget reports whether GOCACHED_IT_TARGETS selects the target.
func wantTarget(name string) bool {
	sel := os.Getenv("GOCACHED_IT_TARGETS")
	if sel == "" {
		return true
	}
	for _, s := range strings.Split(sel, ",") {
		if strings.TrimSpace(s) == name {
			return true
		}
	}
	return false
}

// forEachEngine runs fn as a subtest per gocached engine.
func forEachEngine(t *testing.T, fn func(t *testing.T, tg target)) {
	t.Helper()
	runTargets(t, engineTargets, fn)
}

// forEachTarget runs fn against every engine and against memcached 1.6.45
// (referenceMemcached), which proves that what the suite asserts is
// memcached's behaviour.
func forEachTarget(t *testing.T, fn func(t *testing.T, tg target)) {
	t.Helper()
	runTargets(t, append(append([]target(nil), engineTargets...), referenceTarget), fn)
}

func runTargets(t *testing.T, tgs []target, fn func(t *testing.T, tg target)) {
	for _, tg := range tgs {
		t.Run(tg.name, func(t *testing.T) {
			if !wantTarget(tg.name) {
				t.Skipf("target %s not in GOCACHED_IT_TARGETS", tg.name)
			}
			fn(t, tg)
		})
	}
}

// TestMain removes the gocached binary built for the run and fails the
// package if a test left a goroutine running (a connection reader, a
// replay, a server's output copier).
func TestMain(m *testing.M) { testproc.VerifyMain(m, testproc.Cleanup) }

// gocachedBinary builds ./cmd/gocached once per test run (GOCACHED_IT_RACE=1
// builds it with -race) and returns its path.
func gocachedBinary(t testing.TB) string {
	t.Helper()
	bin, err := testproc.GocachedBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// spec is how tg starts: the engine's flag for gocached, the reference
// binary for memcached, then flags (memcached spelling, which gocached
// shares). No -l or -p: the caller adds what it needs.
func spec(t testing.TB, tg target, flags ...string) testproc.Spec {
	t.Helper()
	if tg.isReference() {
		return testproc.Memcached(referenceMemcached(t), flags...)
	}
	return testproc.Gocached(gocachedBinary(t), tg.engine, flags...)
}

// startServer starts tg on a free loopback port with extra flags and stops
// it at cleanup, failing the test unless it exits 0 on SIGTERM.
func startServer(t testing.TB, tg target, flags ...string) *testproc.Proc {
	t.Helper()
	return startSpec(t, spec(t, tg, append([]string{"-l", "127.0.0.1", "-U", "0"}, flags...)...), false)
}

// startDisposable is startServer for a server whose shutdown is not under
// test: it is killed at cleanup (memcached takes up to a second to act on
// SIGTERM, which adds up over hundreds of differential scripts).
func startDisposable(t testing.TB, tg target, flags ...string) *testproc.Proc {
	t.Helper()
	return startSpec(t, spec(t, tg, append([]string{"-l", "127.0.0.1", "-U", "0"}, flags...)...), true)
}

// startSpec starts sp on a free port (sp's Args must not hold -p) and
// registers its stop (or, with kill, its SIGKILL) at cleanup; the server's
// output is logged when the test failed.
func startSpec(t testing.TB, sp testproc.Spec, kill bool) *testproc.Proc {
	t.Helper()
	p := startWithin(t, sp, testproc.StartOnFreePort)
	t.Cleanup(func() {
		var exitErr error
		if kill {
			exitErr = p.Kill()
		} else {
			exitErr = p.Stop(0)
		}
		checkRaces(t, p)
		switch out := p.Output(); {
		case t.Failed() && out != "":
			t.Logf("%s output:\n%s", p, out)
		case !t.Failed() && exitErr != nil:
			t.Errorf("%s did not exit cleanly: %v\noutput:\n%s", p, exitErr, out)
		}
	})
	return p
}

// checkRaces fails t if p, a server built with -race (GOCACHED_IT_RACE=1),
// reported a data race: it prints the report and serves on, and a killed
// server never exits with the race detector's status.
func checkRaces(t testing.TB, p *testproc.Proc) {
	if r := p.RaceReport(); r != "" {
		t.Errorf("%s reported a data race:\n%s", p, r)
	}
}

// startAt starts sp, waiting at most a minute for it to accept on
// sp.Addr, and kills it when the test ends: for servers whose command line
// the test writes whole (fixed ports, several listeners).
func startAt(t testing.TB, sp testproc.Spec) *testproc.Proc {
	t.Helper()
	p := startWithin(t, sp, testproc.Start)
	t.Cleanup(func() {
		p.Kill()
		checkRaces(t, p)
	})
	return p
}

// startWithin starts sp with start, allowing it a minute to accept.
func startWithin(t testing.TB, sp testproc.Spec, start func(context.Context, testproc.Spec) (*testproc.Proc, error)) *testproc.Proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := start(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
