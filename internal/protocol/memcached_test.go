package protocol

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// The expected replies in scripts were taken from memcached 1.6.18. The
// tests against memcached re-check them against the real binary when it is
// installed, so that the tables cannot drift from memcached's behaviour.

// memcachedWait bounds every wait on the reference memcached: generous,
// since the machine may be shared and loaded. A test that gets its answer
// does not wait it out.
const memcachedWait = 30 * time.Second

// startMemcached runs memcached on a free loopback port and returns its address.
func startMemcached(t *testing.T) string {
	t.Helper()
	return startMemcachedWith(t, nil)
}

// startMemcachedWith is startMemcached with extra environment and flags.
func startMemcachedWith(t *testing.T, env []string, extra ...string) string {
	t.Helper()
	return startMemcachedProc(t, env, extra...).Addr()
}

// startMemcachedProc starts memcached (UDP off, loopback only) with extra
// environment and flags, stopped when the test ends. Without memcached
// installed the test is skipped, or fails under GOCACHED_REQUIRE_TESTBED=1.
// Its stdout and stderr (the -vv lines) are the Proc's Output.
func startMemcachedProc(t *testing.T, env []string, extra ...string) *testproc.Proc {
	t.Helper()
	bin, err := testproc.MemcachedBinary()
	if err != nil {
		if testproc.Required() {
			t.Fatalf("%v and %s=1", err, testproc.RequireEnv)
		}
		t.Skipf("%v: reference replies not re-checked", err)
	}
	return startMemcachedBin(t, bin, env, extra...)
}

// startMemcachedBin starts the memcached binary bin as startMemcachedProc
// does: UDP off, loopback only, on a free port, stopped when the test ends.
func startMemcachedBin(t *testing.T, bin string, env []string, extra ...string) *testproc.Proc {
	t.Helper()
	spec := testproc.Memcached(bin, append([]string{"-l", "127.0.0.1", "-U", "0"}, extra...)...)
	spec.Env = env
	ctx, cancel := context.WithTimeout(context.Background(), 2*memcachedWait)
	defer cancel()
	p, err := testproc.StartOnFreePort(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	return p
}

// exchange sends in on a new connection and reads the reply: up to want
// bytes (or until close), then briefly longer to catch anything extra.
func exchange(t *testing.T, addr string, in string, want int) result {
	t.Helper()
	return exchangeWant(t, addr, in, want, false)
}

// exchangeWant is exchange for a reply of want bytes after which the
// server closes the connection if closes: then the close is waited for as
// long as the reply (on a loaded machine it may come well after the last
// byte), else only briefly, to catch an unexpected one.
func exchangeWant(t *testing.T, addr string, in string, want int, closes bool) result {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// The write runs beside the reads: a large reply would otherwise fill
	// the socket buffers while a large request is still being written.
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		c.Write([]byte(in))
	}()
	defer func() {
		c.Close()
		<-wrote
	}()
	var out bytes.Buffer
	buf := make([]byte, 64<<10)
	c.SetReadDeadline(time.Now().Add(memcachedWait))
	for {
		if out.Len() >= want && !closes {
			// Anything more is a difference; it would come at once.
			c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		}
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			return result{out: out.String(), closed: true}
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return result{out: out.String(), closed: false}
		}
		if err != nil {
			// A reset after close counts as a close.
			return result{out: out.String(), closed: true}
		}
	}
}

// exchangeAll sends in and returns the whole reply, however long: it
// sends a no-op after in (mn, or a binary noop with an opaque of its own
// when in is binary) and reads until its reply, which it leaves out, or
// until a close. A text in must not hold an mn of its own.
func exchangeAll(t *testing.T, addr, in string) result {
	t.Helper()
	if len(in) > 0 && in[0] == binaryMagicRequest {
		const opaque = 0x5e471e1 // not used by the tests' requests
		return exchangeThrough(t, addr, in, binReq(opNoop, "", "", "", opaque, 0),
			string(appendBinHeader(nil, opNoop, 0, 0, 0, 0, [4]byte{0x05, 0xe4, 0x71, 0xe1}, 0)))
	}
	return exchangeThrough(t, addr, in, "mn\r\n", "MN\r\n")
}

// exchangeThrough sends in and then req, and reads until the reply ends
// in reply (req's, which it leaves out) or the server closes.
func exchangeThrough(t *testing.T, addr, in, req, reply string) result {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		c.Write([]byte(in + req))
	}()
	defer func() {
		c.Close()
		<-wrote
	}()
	c.SetReadDeadline(time.Now().Add(memcachedWait))
	var out []byte
	buf := make([]byte, 64<<10)
	for !bytes.HasSuffix(out, []byte(reply)) {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) || (err != nil && !os.IsTimeout(err)) {
			return result{out: string(out), closed: true}
		}
		if err != nil {
			t.Fatalf("no end to memcached's reply to %q in %v: got %q", abbrev(in), memcachedWait, abbrev(string(out)))
		}
	}
	return result{out: string(out[:len(out)-len(reply)]), closed: false}
}

// exchangeLike sends a text stream to which gocached replied own and
// returns memcached's whole reply: up to its close when gocached closed,
// else through a trailing miss of a key of its own, whose reply no
// command of the stream gives (the streams may hold mn). Waiting for as
// many bytes as gocached sent is not exact for text: CAS values, times and
// numbers printed in the replies differ in width.
func exchangeLike(t *testing.T, addr, in string, own result) result {
	t.Helper()
	if own.closed {
		return exchangeWant(t, addr, in, len(own.out), true)
	}
	return exchangeThrough(t, addr, in, "mg exchange-end k\r\n", "EN kexchange-end\r\n")
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
	c.SetDeadline(time.Now().Add(memcachedWait))
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

// flushMemcached empties the reference server between cases, then deletes
// keys by name: memcached's flush_all unlinks recent items by walking each
// LRU from its head and skips one whose item lock it cannot take, or that
// sits behind an older item, so an item touched in the current second can
// outlive the flush. Tests that run many streams a second name their keys.
func flushMemcached(t *testing.T, addr string, keys ...string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(memcachedWait))
	req := "flush_all\r\nverbosity 0\r\n"
	for _, k := range keys {
		req += "delete " + k + " noreply\r\n"
	}
	req += "mn\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for _, want := range []string{"OK\r\n", "OK\r\n", "MN\r\n"} {
		if l, err := r.ReadString('\n'); err != nil || l != want {
			t.Fatalf("flushing memcached: %q %v, want %q", l, err, want)
		}
	}
}

func TestScriptsAgainstMemcached(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short mode")
	}
	addr := startMemcached(t)
	for _, sc := range scripts {
		if sc.own || sc.since != "" {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			flushMemcached(t, addr)
			got := exchangeWant(t, addr, sc.in, len(sc.want), sc.closed)
			checkResult(t, sc, got, "memcached")
		})
	}
}

// probeClosed waits until memcached's -vv log shows the close of
// testproc's readiness probe: memcached writes a line in pieces,
// and the probe's close, logged by another thread, could otherwise land in
// the middle of a line of the connection under test.
func probeClosed(t *testing.T, log *testproc.Proc) {
	t.Helper()
	waitLogged(t, log, "its readiness probe's close", func(text string) bool {
		return strings.Contains(text, " connection closed.\n")
	})
}

// waitLogged polls memcached's log (at most memcachedWait) until done holds for its
// text, and returns that text. memcached writes a connection's -vv lines
// before it closes the socket, but they reach log through a pipe this
// process copies from in its own time: a client that has seen the close
// has not necessarily got the lines yet.
func waitLogged(t *testing.T, log *testproc.Proc, what string, done func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(memcachedWait)
	for {
		text := log.Output()
		if done(text) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("memcached -vv never logged %s:\n%s", what, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
