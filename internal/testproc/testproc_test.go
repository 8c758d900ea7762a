package testproc

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a stubborn server (see TestMain).
const helperEnv = "TESTPROC_HELPER_LISTEN"

func TestMain(m *testing.M) {
	if addr := os.Getenv(helperEnv); addr != "" {
		stubbornServer(addr)
		return
	}
	if os.Getenv(orphanParentEnv) != "" {
		orphanParent()
		return
	}
	VerifyMain(m, Cleanup)
}

// stubbornServer listens on addr and ignores SIGTERM, for the test of
// Stop's SIGKILL fallback. It exits by itself after 30 s at the latest so
// that nothing outlives a broken test for long.
func stubbornServer(addr string) {
	signal.Ignore(syscall.SIGTERM)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(3)
	}
	defer l.Close()
	go acceptAndClose(l)
	time.Sleep(30 * time.Second)
}

// acceptAndClose accepts and closes every connection until l is closed.
func acceptAndClose(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// needMemcached returns memcached's path, or skips (fails under RequireEnv).
func needMemcached(t *testing.T) string {
	t.Helper()
	bin, err := MemcachedBinary()
	if err != nil {
		if Required() {
			t.Fatalf("%v (%s=1)", err, RequireEnv)
		}
		t.Skipf("skipping: %v; set %s=1 to fail instead", err, RequireEnv)
	}
	return bin
}

func gocached(t *testing.T) string {
	t.Helper()
	bin, err := GocachedBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// version asks the server at addr for its version line.
func version(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("version\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("version from %s: %v", addr, err)
	}
	return line
}

// checkLifecycle runs the whole life of a server: start, serve, memory,
// graceful stop, port released.
func checkLifecycle(t *testing.T, spec Spec) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := StartOnFreePort(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if p.Pid() <= 0 || p.Port() <= 0 {
		t.Fatalf("pid %d port %d", p.Pid(), p.Port())
	}
	if got := version(t, p.Addr()); !strings.HasPrefix(got, "VERSION ") {
		t.Fatalf("version: %q", got)
	}
	m, err := p.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if m.Current <= 0 || m.Peak < m.Current {
		t.Fatalf("memory %+v: want 0 < current <= peak", m)
	}
	t.Logf("%s: peak RSS %d KiB, current %d KiB", p, m.Peak>>10, m.Current>>10)
	start := time.Now()
	if err := p.Stop(0); err != nil {
		t.Fatalf("stop: %v; output:\n%s", err, p.Output())
	}
	t.Logf("stopped in %v", time.Since(start).Round(time.Millisecond))
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if err := p.Stop(0); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if c, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("still accepting after Stop")
	}
}

func TestGocachedLifecycle(t *testing.T) {
	bin := gocached(t)
	for _, engine := range []string{"go", "epoll"} {
		t.Run(engine, func(t *testing.T) {
			checkLifecycle(t, Gocached(bin, engine, "-l", "127.0.0.1", "-U", "0"))
		})
	}
}

func TestMemcachedLifecycle(t *testing.T) {
	checkLifecycle(t, Memcached(needMemcached(t), "-l", "127.0.0.1", "-U", "0", "-t", "1"))
}

// TestStartReportsEarlyExit: a server that rejects its flags fails Start
// promptly, with its own message in the error.
func TestStartReportsEarlyExit(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	spec := Gocached(gocached(t), "no-such-engine", "-l", "127.0.0.1")
	spec.Addr = net.JoinHostPort("127.0.0.1", itoa(port))
	start := time.Now()
	_, err = Start(context.Background(), spec)
	if err == nil {
		t.Fatal("Start succeeded with --engine=no-such-engine")
	}
	if !strings.Contains(err.Error(), "exited before accepting") || !strings.Contains(err.Error(), "no-such-engine") {
		t.Fatalf("error lacks the exit or the server's message: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v to notice the exit", d)
	}
}

// TestStartTimesOut: a process that never listens fails Start after
// ReadyTimeout and is killed.
func TestStartTimesOut(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "sleeper", Path: "sleep", Args: []string{"30"},
		Addr: net.JoinHostPort("127.0.0.1", itoa(port)), ReadyTimeout: 300 * time.Millisecond}
	start := time.Now()
	_, err = Start(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "not accepting") {
		t.Fatalf("Start of a non-listener: %v, want a readiness timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Start took %v with a 300ms bound", d)
	}
}

// TestStopKillsStubbornServer: a server that ignores SIGTERM is killed after
// the stop bound and Stop says so.
func TestStopKillsStubbornServer(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", itoa(port))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// env sets the helper variable and execs the test binary, so the pid
	// stays the helper's.
	spec := Spec{Name: "stubborn", Path: self, Wrap: []string{"env", helperEnv + "=" + addr}, Addr: addr}
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = p.Stop(300 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Stop of a SIGTERM-ignoring server: %v, want a kill", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Stop took %v", d)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("not reaped after Stop")
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", itoa(port)))
	if err != nil {
		t.Fatalf("port %d not free: %v", port, err)
	}
	l.Close()
}

func TestParseStatus(t *testing.T) {
	const status = "Name:\tgocached\nVmPeak:\t  800000 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t4\n"
	m, err := ParseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if m != (Memory{Peak: 2 << 20, Current: 1 << 20}) {
		t.Fatalf("got %+v", m)
	}
	for _, bad := range []string{"Name:\tzombie\nState:\tZ\n", "VmHWM:\t x kB\nVmRSS:\t 1 kB\n", "VmHWM:\t 1 kB\n"} {
		if m, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("ParseStatus(%q) = %+v, want an error", bad, m)
		}
	}
}

func TestSpecCommand(t *testing.T) {
	s := Spec{Path: "/bin/srv", Args: []string{"-p", "1"}, Wrap: []string{"taskset", "-c", "1"}, NetNS: "ns1"}
	if got, want := strings.Join(s.command(), " "), "ip netns exec ns1 taskset -c 1 /bin/srv -p 1"; got != want {
		t.Fatalf("command %q, want %q", got, want)
	}
	m := Memcached("/usr/bin/memcached", "-t", "1")
	if os.Geteuid() == 0 && strings.Join(m.Args, " ") != "-t 1 -u nobody" {
		t.Fatalf("memcached as root: %q", m.Args)
	}
	if g := Gocached("/g", "epoll", "-t", "1"); strings.Join(g.Args, " ") != "--engine=epoll -t 1" || g.Name != "epoll" {
		t.Fatalf("gocached spec %+v", g)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// takenPort listens on a loopback port for the test, accepting and closing
// whatever connects: another process's server on the port a test was given.
func takenPort(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go acceptAndClose(l)
	return l
}

// TestStartNotFooledByAnotherListener: a server whose port another process
// holds cannot bind it and exits; the readiness probe, answered by that
// other listener, must not report it ready (TestConnLimitWaits/go once
// filled someone else's server and read a reset when it went away).
func TestStartNotFooledByAnotherListener(t *testing.T) {
	l := takenPort(t)
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	spec := Gocached(gocached(t), "go", "-l", "127.0.0.1", "-U", "0", "-p", port)
	spec.Addr = l.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Start(ctx, spec)
	if err == nil {
		defer p.Kill()
		t.Fatalf("Start succeeded on a port held by this test (pid %d listening: %v)", p.Pid(), ownsListener(p.Pid(), p.Addr()))
	}
	if !strings.Contains(err.Error(), "exited before accepting") {
		t.Fatalf("Start: %v, want the server's exit", err)
	}
}

// TestStartOnFreePortRetriesTakenPort: a free port taken by another
// process before the server binds it costs one attempt, and the server
// returned is the one listening on its address.
func TestStartOnFreePortRetriesTakenPort(t *testing.T) {
	l := takenPort(t)
	taken := l.Addr().(*net.TCPAddr).Port
	calls := 0
	freePort = func() (int, error) {
		if calls++; calls == 1 {
			return taken, nil
		}
		return FreePort()
	}
	t.Cleanup(func() { freePort = FreePort })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := StartOnFreePort(ctx, Gocached(gocached(t), "go", "-l", "127.0.0.1", "-U", "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if p.Port() == taken || calls < 2 || !ownsListener(p.Pid(), p.Addr()) {
		t.Fatalf("port %d (taken %d) after %d picks; pid %d listening there: %v", p.Port(), taken, calls, p.Pid(), ownsListener(p.Pid(), p.Addr()))
	}
	if got := version(t, p.Addr()); !strings.HasPrefix(got, "VERSION ") {
		t.Fatalf("version: %q", got)
	}
}
