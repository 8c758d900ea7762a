package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// Twemproxy's settings under test. Servers carry names, so ketama places
// its points by name and the key-to-backend map is the same on every run,
// whatever ports the backends got. md5 is ketama's own hash (fnv1a_64
// sends nearly all of our similar keys to one backend).
const (
	twemRetryTimeout = 2 * time.Second // server_retry_timeout: the dead backend is tried again after it
	twemKeys         = 300
	twemNewKeys      = 60
	twemMultiGet     = 50 // keys per multi-get through the proxy
)

// TestTwemproxy puts Debian's nutcracker (twemproxy, ketama distribution,
// auto_eject_hosts with server_failure_limit 1) in front of three servers of
// each target and checks: keys set through the proxy are spread over all
// three backends (each key on exactly one, every backend holding at least a
// tenth, curr_items agreeing), gets and multi-gets through the proxy return
// them in request order, and once one backend is SIGKILLed the proxy ejects
// it (its stats say so) while every key of the two survivors keeps being
// served, the dead backend's keys read as misses, and new keys are stored
// and read back. After server_retry_timeout the proxy tries the dead backend
// again: one request may fail then, which ejects it again; nothing else may.
func TestTwemproxy(t *testing.T) {
	requireTool(t, "nutcracker")
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		backends, addrs := startBackends(t, tg, 3)
		proxy := startTwemproxy(t, addrs)
		c := &mcClient{addr: proxy.addr}
		defer c.close()

		keys, want := fillThrough(t, c, "twem", tg.name, twemKeys)
		// Where ketama put each key.
		perBackend, owner := placement(t, backends, keys, want, 0)

		getAll := func(what string, ks []string) {
			t.Helper()
			for _, k := range ks {
				if err := c.expectValue(k, want[k]); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			for i := 0; i < len(ks); i += twemMultiGet {
				chunk := ks[i:min(i+twemMultiGet, len(ks))]
				if err := c.expectMulti(chunk, want); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
		}
		getAll("before the kill", keys)
		// A multi-get with misses among hits: the misses are left out.
		mixed := []string{keys[0], "twem:absent:1", keys[1], keys[2], "twem:absent:2", keys[3]}
		if err := c.expectMulti(mixed, want); err != nil {
			t.Fatalf("multi-get with misses: %v", err)
		}

		const victim = 1
		var survivors []string
		for _, k := range keys {
			if owner[k] != victim {
				survivors = append(survivors, k)
			}
		}
		dead := perBackend[victim]
		killed := time.Now()
		if err := backends[victim].Kill(); err != nil { // SIGKILL by pid, then reaped
			t.Fatal(err)
		}

		// The survivors' keys are served whether or not the proxy has
		// noticed yet.
		for _, k := range survivors {
			if err := c.expectValue(k, want[k]); err != nil {
				t.Fatalf("right after the kill: %v", err)
			}
		}

		// Until the proxy ejects the dead backend, its keys may fail; after,
		// they are routed to a survivor, which does not have them: a miss.
		var failures []string
		ejected := false
		for i := 0; i < 200 && time.Since(killed) < 10*time.Second; i++ {
			got, err := c.get(dead[i%len(dead)])
			if err == nil && len(got) == 0 {
				ejected = true
				break
			}
			failures = append(failures, fmt.Sprintf("%v%v", got, err))
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("dead backend's keys before the ejection: %d failures %q", len(failures), failures)
		if !ejected {
			t.Fatalf("the proxy did not eject the killed backend within 10s / 200 requests; replies: %q\n%s", failures, proxy.logTail())
		}
		proxy.waitEjected(t, fmt.Sprintf("backend%d", victim))

		e := &ejection{t: t, since: killed}
		check := func(phase string) {
			t.Helper()
			getAll(phase, survivors)
			for _, k := range dead {
				e.run(phase+": get "+k, func() error {
					got, err := c.get(k)
					if err == nil && len(got) != 0 {
						err = fmt.Errorf("got %v, want a miss: the key's backend is dead", got)
					}
					return err
				})
			}
			for i := range twemNewKeys {
				k := fmt.Sprintf("twem:new:%s:%d", strings.ReplaceAll(phase, " ", "-"), i)
				want[k] = phase + strconv.Itoa(i)
				e.run(phase+": set "+k, func() error { return c.set(k, want[k]) })
				e.run(phase+": get "+k, func() error { return c.expectValue(k, want[k]) })
			}
		}
		check("after the ejection")
		// Past server_retry_timeout the proxy tries the dead backend again,
		// fails, and ejects it again; the survivors are untouched.
		time.Sleep(twemRetryTimeout + 200*time.Millisecond)
		check("after the retry timeout")
		t.Logf("requests failed by the proxy retrying the dead backend: %d", e.retries)
	})
}

// ejection allows a request to fail only when the proxy may be retrying the
// ejected backend: server_retry_timeout after the last ejection. That
// failure ejects the backend again (server_failure_limit 1), so the request
// is repeated once and must succeed.
type ejection struct {
	t       *testing.T
	since   time.Time // no later than the last ejection
	retries int
}

func (e *ejection) run(what string, op func() error) {
	e.t.Helper()
	start := time.Now()
	err := op()
	if err == nil {
		return
	}
	if time.Since(e.since) < twemRetryTimeout-100*time.Millisecond {
		e.t.Fatalf("%s: %v (%v after the ejection, within server_retry_timeout %v)",
			what, err, time.Since(e.since).Round(time.Millisecond), twemRetryTimeout)
	}
	e.retries++
	e.since = start
	if err2 := op(); err2 != nil {
		e.t.Fatalf("%s: failed again after the proxy's retry of the dead backend: %v, then %v", what, err, err2)
	}
}

// twemproxy is a running nutcracker.
type twemproxy struct {
	proc      *testproc.Proc
	addr      string
	statsAddr string
	log       string
}

// startTwemproxy writes a nutcracker config for the backends in a temp dir,
// checks it with -t, and starts nutcracker on free loopback ports (proxy and
// stats), retrying on fresh ports if one was taken. It is SIGKILLed at
// cleanup: its exit status is not under test.
func startTwemproxy(t *testing.T, backends []string) *twemproxy {
	t.Helper()
	bin := requireTool(t, "nutcracker")
	dir := t.TempDir()
	conf := filepath.Join(dir, "nutcracker.yml")
	var errs []error
	for attempt := range 4 {
		port, err1 := testproc.FreePort()
		sport, err2 := testproc.FreePort()
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if port == sport {
			continue
		}
		tp := &twemproxy{
			addr:      net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			statsAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(sport)),
			log:       filepath.Join(dir, fmt.Sprintf("nutcracker.%d.log", attempt)),
		}
		var cfg strings.Builder
		fmt.Fprintf(&cfg, "gocached:\n  listen: %s\n  hash: md5\n  distribution: ketama\n", tp.addr)
		fmt.Fprintf(&cfg, "  timeout: 2000\n  auto_eject_hosts: true\n  server_failure_limit: 1\n")
		fmt.Fprintf(&cfg, "  server_retry_timeout: %d\n  servers:\n", twemRetryTimeout.Milliseconds())
		for i, b := range backends {
			fmt.Fprintf(&cfg, "   - %s:1 backend%d\n", b, i)
		}
		if err := os.WriteFile(conf, []byte(cfg.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := testproc.CommandContext(ctx, bin, "-t", "-c", conf).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("nutcracker -t rejects the config: %v\n%s\n%s", err, out, cfg.String())
		}
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		p, err := testproc.Start(ctx, testproc.Spec{
			Name: "nutcracker",
			Path: bin,
			Args: []string{"-c", conf, "-s", strconv.Itoa(sport), "-a", "127.0.0.1", "-i", "100",
				"-o", tp.log, "-p", filepath.Join(dir, "nutcracker.pid")},
			Addr: tp.addr,
		})
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%w\nlog:\n%s", err, tp.logTail()))
			continue
		}
		tp.proc = p
		t.Cleanup(func() {
			if err := p.Kill(); err != nil {
				t.Error(err)
			}
			if t.Failed() {
				t.Logf("nutcracker config:\n%s\n%s output:\n%s\nlog:\n%s", cfg.String(), p, p.Output(), tp.logTail())
			}
		})
		return tp
	}
	t.Fatalf("nutcracker did not start: %v", errors.Join(errs...))
	return nil
}

// logTail is the last 4 KiB of nutcracker's log.
func (tp *twemproxy) logTail() string {
	b, err := os.ReadFile(tp.log)
	if err != nil {
		return err.Error()
	}
	return string(b[max(0, len(b)-4096):])
}

// stats reads nutcracker's JSON stats from its stats port.
func (tp *twemproxy) stats() (map[string]any, error) {
	conn, err := net.DialTimeout("tcp", tp.statsAddr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %q", err, b)
	}
	return m, nil
}

// waitEjected waits (bounded) until nutcracker's stats show the pool's
// ejection of the named server: server_ejects ≥ 1, server_ejected_at set.
func (tp *twemproxy) waitEjected(t *testing.T, server string) {
	t.Helper()
	var last any
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		m, err := tp.stats()
		if err != nil {
			last = err
		} else {
			pool, _ := m["gocached"].(map[string]any)
			srv, _ := pool[server].(map[string]any)
			ejects, _ := pool["server_ejects"].(float64)
			at, _ := srv["server_ejected_at"].(float64)
			if ejects >= 1 && at > 0 {
				return
			}
			last = m
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("nutcracker's stats do not show %s ejected after 30s: %v", server, last)
}

// mcClient is a text-protocol client that reports failures as errors (the
// proxy answers SERVER_ERROR when a backend fails) and reconnects after an
// I/O error. Every request has a deadline.
type mcClient struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
}

type kv struct{ key, value string }

func (c *mcClient) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.r = nil, nil
	}
}

// request sends req and hands the reader to read; an I/O error closes the
// connection so that the next request dials again.
func (c *mcClient) request(req string, read func(r *bufio.Reader) error) error {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, 2*time.Second)
		if err != nil {
			return err
		}
		c.conn, c.r = conn, bufio.NewReader(conn)
	}
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c.conn, req); err != nil {
		c.close()
		return err
	}
	var re replyError
	if err := read(c.r); err != nil && !errors.As(err, &re) {
		c.close()
		return err
	}
	return nil
}

// replyError is an unexpected reply line, such as the proxy's SERVER_ERROR.
type replyError string

func (e replyError) Error() string { return fmt.Sprintf("reply %q", string(e)) }

func (c *mcClient) set(key, value string) error {
	var rerr error
	err := c.request(fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", key, len(value), value), func(r *bufio.Reader) error {
		l, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if l != "STORED\r\n" {
			rerr = replyError(l)
		}
		return rerr
	})
	return errors.Join(err, rerr)
}

// get returns the values of a get of keys, in reply order.
func (c *mcClient) get(keys ...string) ([]kv, error) {
	var got []kv
	var rerr error
	err := c.request("get "+strings.Join(keys, " ")+"\r\n", func(r *bufio.Reader) error {
		for range len(keys) + 1 {
			l, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			if l == "END\r\n" {
				return nil
			}
			f := strings.Fields(l)
			n := -1
			if len(f) == 4 && f[0] == "VALUE" {
				n, _ = strconv.Atoi(f[3])
			}
			if n < 0 {
				rerr = replyError(l)
				return rerr
			}
			data := make([]byte, n+2)
			if _, err := io.ReadFull(r, data); err != nil {
				return err
			}
			got = append(got, kv{f[1], string(data[:n])})
		}
		return errors.New("more VALUEs than keys asked for")
	})
	return got, errors.Join(err, rerr)
}

// expectValue gets key and checks that it holds want.
func (c *mcClient) expectValue(key, want string) error {
	got, err := c.get(key)
	if err != nil {
		return fmt.Errorf("get %s: %w", key, err)
	}
	if len(got) != 1 || got[0].key != key || got[0].value != want {
		return fmt.Errorf("get %s: %v, want %q", key, got, want)
	}
	return nil
}

// expectMulti gets keys in one request and checks that the reply holds
// exactly the keys want has, in request order, with their values.
func (c *mcClient) expectMulti(keys []string, want map[string]string) error {
	got, err := c.get(keys...)
	if err != nil {
		return fmt.Errorf("multi-get of %d keys: %w", len(keys), err)
	}
	var exp []kv
	for _, k := range keys {
		if v, ok := want[k]; ok {
			exp = append(exp, kv{k, v})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(exp) {
		return fmt.Errorf("multi-get of %d keys:\n got %v\nwant %v", len(keys), got, exp)
	}
	return nil
}
