package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The expected replies in scripts were taken from memcached 1.6.18. This test
// re-checks them against the real binary when it is installed, so that the
// table cannot drift from memcached's behaviour.

const memcachedPath = "/usr/bin/memcached"

// startMemcached runs memcached on a free loopback port and returns its address.
func startMemcached(t *testing.T) string {
	t.Helper()
	return startMemcachedWith(t, nil)
}

// startMemcachedWith is startMemcached with extra environment and flags.
func startMemcachedWith(t *testing.T, env []string, extra ...string) string {
	t.Helper()
	return startMemcachedLog(t, nil, env, extra...)
}

// startMemcachedLog is startMemcachedWith sending memcached's stderr to stderr.
func startMemcachedLog(t *testing.T, stderr io.Writer, env []string, extra ...string) string {
	t.Helper()
	if _, err := os.Stat(memcachedPath); err != nil {
		if os.Getenv("GOCACHED_REQUIRE_TESTBED") == "1" {
			t.Fatalf("memcached not installed (%v) and GOCACHED_REQUIRE_TESTBED=1", err)
		}
		t.Skipf("memcached not installed (%v): reference replies not re-checked", err)
	}
	// memcached picks its own port (-p -1) and names it in its port file:
	// a port picked here and freed for it could be taken by another
	// test's server first, and the dial would then reach that one.
	// As root memcached runs as nobody, who must reach and write the
	// directory (its file goes in as FILE.lck, renamed).
	dir, err := os.MkdirTemp("", "memcached-ports-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	portFile := filepath.Join(dir, "ports")
	args := []string{"-l", "127.0.0.1", "-p", "-1", "-U", "0"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
	}
	args = append(args, extra...)
	cmd := exec.Command(memcachedPath, args...)
	cmd.Env = append(append(os.Environ(), env...), "MEMCACHED_PORT_FILENAME="+portFile)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start memcached: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(portFile); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if port, ok := strings.CutPrefix(line, "TCP INET: "); ok {
					// One connection opened and closed: the -vv tests
					// wait for its lines (probeClosed) before their own.
					addr := net.JoinHostPort("127.0.0.1", port)
					c, err := net.DialTimeout("tcp", addr, 5*time.Second)
					if err != nil {
						t.Fatalf("memcached on %s: %v", addr, err)
					}
					c.Close()
					return addr
				}
			}
		}
		select {
		case <-exited:
			t.Fatalf("memcached %q exited before it listened", args)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("memcached %q wrote no port file in 5 s", args)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exchange sends in on a new connection and reads the reply: up to want
// bytes, then briefly longer to catch anything extra, or until close.
func exchange(t *testing.T, addr string, in string, want int) result {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		c.Write([]byte(in))
	}()
	var out bytes.Buffer
	buf := make([]byte, 64<<10)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	for {
		if out.Len() >= want {
			c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		}
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			return result{out.String(), true}
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return result{out.String(), false}
		}
		if err != nil {
			// A reset after close counts as a close.
			return result{out.String(), true}
		}
	}
}

// exchangeUntil sends in and reads until the output ends with end (a
// sentinel such as mn's "MN\r\n" after commands whose replies vary), so
// that a script with no fixed reply length does not wait out a deadline.
func exchangeUntil(t *testing.T, addr, in, end string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := make([]byte, 4<<10)
	for !bytes.HasSuffix(out, []byte(end)) {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("waiting for %q after %q: got %q, %v", end, in, out, err)
		}
	}
	return string(out)
}

func flushMemcached(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("flush_all\r\nverbosity 0\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for range 2 {
		if l, err := r.ReadString('\n'); err != nil || l != "OK\r\n" {
			t.Fatalf("flush_all: %q %v", l, err)
		}
	}
}

func TestScriptsAgainstMemcached(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, sc := range scripts {
		if sc.own {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			got := exchange(t, addr, sc.in, len(sc.want))
			checkResult(t, sc, got, "memcached")
		})
	}
}

// probeClosed waits until memcached's -vv log shows the close of
// startMemcachedLog's readiness probe: memcached writes a line in pieces,
// and the probe's close, logged by another thread, could otherwise land in
// the middle of a line of the connection under test.
func probeClosed(t *testing.T, log *lockedBuffer) {
	t.Helper()
	waitLogged(t, log, "its readiness probe's close", func(text string) bool {
		return strings.Contains(text, " connection closed.\n")
	})
}

// waitLogged polls memcached's log (at most 10 s) until done holds for its
// text, and returns that text. memcached writes a connection's -vv lines
// before it closes the socket, but they reach log through a pipe this
// process copies from in its own time: a client that has seen the close
// has not necessarily got the lines yet.
func waitLogged(t *testing.T, log *lockedBuffer, what string, done func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		text := log.String()
		if done(text) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("memcached -vv never logged %s:\n%s", what, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
