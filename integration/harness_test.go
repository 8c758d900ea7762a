package integration

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// target is one kind of server a suite can run against.
type target struct {
	name   string // subtest name: "go", "epoll", "memcached"
	engine string // gocached --engine value; "" for the memcached reference
}

func (tg target) isReference() bool { return tg.engine == "" }

var (
	engineTargets   = []target{{name: "go", engine: "go"}, {name: "epoll", engine: "epoll"}}
	referenceTarget = target{name: "memcached"}
)

// requireTestbed reports whether missing tools must fail the run (CI).
func requireTestbed() bool { return os.Getenv("GOCACHED_REQUIRE_TESTBED") == "1" }

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

func debianPackage(tool string) string {
	switch {
	case tool == "memcached":
		return "memcached"
	case strings.HasPrefix(tool, "memc"):
		return "libmemcached-tools"
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

// forEachTarget runs fn against both engines and against memcached, which
// proves that what the suite asserts is memcached's behaviour.
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

// The gocached binary, built once per test run.
var build struct {
	once sync.Once
	path string
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// gocachedBinary builds ./cmd/gocached once and returns its path.
func gocachedBinary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			build.err = err
			return
		}
		build.dir, err = os.MkdirTemp("", "gocached-it-")
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(build.dir, "gocached")
		args := []string{"build", "-o", build.path}
		if os.Getenv("GOCACHED_IT_RACE") == "1" {
			args = append(args, "-race") // the server itself under the race detector
		}
		cmd := exec.Command(goTool(), append(args, "./cmd/gocached")...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/gocached: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// goTool finds the go command: on PATH, else the toolchain's usual home.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}

// server is one running server process on a loopback port.
type server struct {
	tb     testing.TB
	target target
	cmd    *exec.Cmd
	port   int
	stderr *lockedBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // Wait's result, valid after done
}

// Addr is host:port of the server.
func (s *server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Pid is the server's process id.
func (s *server) Pid() int { return s.cmd.Process.Pid }

// Stderr is what the server has logged so far.
func (s *server) Stderr() string { return s.stderr.String() }

// startServer starts tg on a free loopback port with extra flags (memcached
// spelling, which gocached shares) and stops it at cleanup.
func startServer(t testing.TB, tg target, flags ...string) *server {
	t.Helper()
	return startServerOpts(t, tg, false, flags)
}

// startDisposable is startServer for a server whose shutdown is not under
// test: it is killed at cleanup (memcached takes up to a second to act on
// SIGTERM, which adds up over hundreds of differential scripts).
func startDisposable(t testing.TB, tg target, flags ...string) *server {
	t.Helper()
	return startServerOpts(t, tg, true, flags)
}

func startServerOpts(t testing.TB, tg target, kill bool, flags []string) *server {
	t.Helper()
	var lastErr error
	// A free port can be taken between probing and binding; retry a few times.
	for attempt := 0; attempt < 4; attempt++ {
		s, err := tryStart(t, tg, kill, flags)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("start %s: %v", tg.name, lastErr)
	return nil
}

func tryStart(t testing.TB, tg target, kill bool, flags []string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var bin string
	var args []string
	if tg.isReference() {
		bin = requireTool(t, "memcached")
		if os.Geteuid() == 0 {
			args = append(args, "-u", "nobody") // memcached refuses to run as root otherwise
		}
	} else {
		bin = gocachedBinary(t)
		args = append(args, "--engine="+tg.engine)
	}
	args = append(args, "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0")
	args = append(args, flags...)
	s := &server{tb: t, target: tg, port: port, stderr: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout = s.stderr
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	if err := s.waitAccepting(10 * time.Second); err != nil {
		s.kill()
		return nil, fmt.Errorf("%s %s: %v; output:\n%s", bin, strings.Join(args, " "), err, s.Stderr())
	}
	t.Cleanup(func() {
		if kill {
			s.kill()
			if t.Failed() {
				t.Logf("%s (pid %d, %s) output:\n%s", tg.name, s.Pid(), strings.Join(args, " "), s.Stderr())
			}
			return
		}
		exitErr := s.Stop()
		if t.Failed() {
			t.Logf("%s (pid %d, %s) output:\n%s", tg.name, s.Pid(), strings.Join(args, " "), s.Stderr())
		}
		if exitErr != nil && !t.Failed() {
			t.Errorf("%s did not exit cleanly on SIGTERM: %v\noutput:\n%s", tg.name, exitErr, s.Stderr())
		}
	})
	return s, nil
}

func (s *server) waitAccepting(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("exited before accepting: %v", s.err)
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("not accepting on %s after %v", s.Addr(), limit)
}

// Stop sends SIGTERM and waits for exit (SIGKILL after 10 s). It returns the
// exit error, nil for exit status 0. Calling it again returns the same result.
func (s *server) Stop() error {
	select {
	case <-s.done:
		return s.exitResult()
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.exitResult()
	case <-time.After(10 * time.Second):
		s.kill()
		return fmt.Errorf("still running 10s after SIGTERM; killed")
	}
}

// exitResult is nil for exit status 0. Dying of the signal itself (no
// handler installed) is reported as an error too: that is not a clean exit.
func (s *server) exitResult() error { return s.err }

func (s *server) kill() {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer collects a process's output safely across goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 { // keep the log bounded; -vv can be chatty
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
