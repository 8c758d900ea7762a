package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/refmc"
	"github.com/gocached/gocached/internal/testproc"
)

const (
	mcproxyKeys    = 200
	mcproxyNewKeys = 60
)

// mcproxyBuild builds memcached 1.6.45 with its proxy once per test binary;
// a failure is kept, so every test reports it without building again.
var mcproxyBuild = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), referenceBuildLimit)
	defer cancel()
	return refmc.Current.ProxyBinary(ctx)
})

// mcproxyConfig is the proxy's route config, for its built-in route library
// (-o proxy_config=routelib). Pool main hashes keys over the three backends;
// pool spare holds the same backends rotated by one, so the jump hash sends
// a key to spare's backend i+1 where main sends it to backend i. The failover
// route tries main, then spare: a key whose backend is down is served by the
// next one; "stats proxy" counts those retries (user_default_retries). A
// failed backend is marked bad at once and retried after a second, so
// nothing waits on a dead one for long.
const mcproxyConfig = `settings{
    backend_connect_timeout = 1,
    backend_read_timeout = 2,
    backend_retry_waittime = 1,
    backend_failure_limit = 1,
}
pools{
    main = { backends = { %[1]q, %[2]q, %[3]q } },
    spare = { backends = { %[2]q, %[3]q, %[1]q } },
}
routes{
    default = route_failover{ children = { "main", "spare" }, stats = true },
}
`

// mcproxyScript is text and meta requests through the proxy with the exact
// replies memcached 1.6.45 gives, proxied to either server. The keys land on
// different backends, so the multi-get's reply is put together by the proxy.
var mcproxyScript = []struct{ req, reply string }{
	{"set px:a 5 0 3\r\nabc\r\n", "STORED\r\n"},
	{"get px:a\r\n", "VALUE px:a 5 3\r\nabc\r\nEND\r\n"},
	{"add px:a 0 0 1\r\nz\r\n", "NOT_STORED\r\n"},
	{"append px:a 0 0 2\r\nde\r\n", "STORED\r\n"},
	{"set px:n 0 0 2\r\n10\r\n", "STORED\r\n"},
	{"incr px:n 5\r\n", "15\r\n"},
	{"decr px:n 20\r\n", "0\r\n"},
	{"incr px:missing 1\r\n", "NOT_FOUND\r\n"},
	{"get px:a px:missing px:n\r\n", "VALUE px:a 5 5\r\nabcde\r\nVALUE px:n 0 2\r\n0 \r\nEND\r\n"},
	{"touch px:n 100\r\n", "TOUCHED\r\n"},
	{"delete px:a\r\n", "DELETED\r\n"},
	{"delete px:a\r\n", "NOT_FOUND\r\n"},
	{"ms px:m 2 F7 T0\r\nhi\r\n", "HD\r\n"},
	{"mg px:m v f k s O42\r\n", "VA 2 f7 kpx:m s2 O42\r\nhi\r\n"},
	{"mg px:nope v\r\n", "EN\r\n"},
	{"ma px:n v\r\n", "VA 1\r\n1\r\n"},
	{"md px:m q\r\nmn\r\n", "MN\r\n"},
	{"md px:m\r\n", "NF\r\n"},
	{"mg px:m v\r\n", "EN\r\n"},
}

// TestMemcachedProxy puts memcached 1.6.45's proxy (built with
// --enable-proxy, routed by its route library) in front of three servers of
// each target and checks: text and meta requests get memcached's replies
// byte for byte, keys set through the proxy are spread over the three
// backends and read back through it, and once one backend is SIGKILLed the
// failover route keeps answering: the survivors' keys are served, the dead
// backend's keys read as misses, and fresh keys are stored and read back.
func TestMemcachedProxy(t *testing.T) {
	bin, err := mcproxyBuild()
	if err != nil {
		missing(t, "memcached %s with its proxy not built: %v", refmc.Current.Version, err)
	}
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		backends, addrs := startBackends(t, tg, 3)
		proxy := startMemcachedProxy(t, bin, addrs)

		raw := dialRaw(t, proxy.Addr())
		for _, step := range mcproxyScript {
			if got := mcproxyExchange(raw, step.req, len(step.reply)); got != step.reply {
				t.Fatalf("%q through the proxy:\n got %q\nwant %q", step.req, got, step.reply)
			}
		}

		c := &mcClient{addr: proxy.Addr()}
		defer c.close()
		keys, want := fillThrough(t, c, "pxk", tg.name, mcproxyKeys)
		// Where the proxy put each key (the script's px:n is on one too).
		_, owner := placement(t, backends, keys, want, 1)
		for _, k := range keys {
			if err := c.expectValue(k, want[k]); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < len(keys); i += 50 {
			if err := c.expectMulti(keys[i:i+50], want); err != nil {
				t.Fatal(err)
			}
		}

		if n := mcproxyRetries(t, raw); n != 0 {
			t.Fatalf("the failover route retried %d requests while every backend was up", n)
		}
		const victim = 1
		if err := backends[victim].Kill(); err != nil { // SIGKILL by pid, then reaped
			t.Fatal(err)
		}
		// The failover route answers every request, before and after the
		// proxy marks the dead backend bad: no request may fail.
		for phase := range 2 {
			for _, k := range keys {
				if owner[k] != victim {
					if err := c.expectValue(k, want[k]); err != nil {
						t.Fatalf("survivor's key after the kill: %v", err)
					}
					continue
				}
				got, err := c.get(k)
				if err != nil || len(got) != 0 {
					t.Fatalf("dead backend's key %s after the kill: %v %v, want a miss", k, got, err)
				}
			}
			fresh := make([]string, mcproxyNewKeys)
			for i := range fresh {
				fresh[i] = fmt.Sprintf("pxnew:%d:%d", phase, i)
				want[fresh[i]] = fmt.Sprintf("after-kill-%d-%d", phase, i)
				if err := c.set(fresh[i], want[fresh[i]]); err != nil {
					t.Fatalf("set %s after the kill: %v", fresh[i], err)
				}
				if err := c.expectValue(fresh[i], want[fresh[i]]); err != nil {
					t.Fatalf("after the kill: %v", err)
				}
			}
			if err := c.expectMulti(fresh, want); err != nil {
				t.Fatalf("after the kill: %v", err)
			}
			meta := fmt.Sprintf("pxmeta:%d", phase)
			const metaReply = "HD\r\nVA 1\r\nx\r\n"
			if got := mcproxyExchange(raw, "ms "+meta+" 1 T0\r\nx\r\nmg "+meta+" v\r\n", len(metaReply)); got != metaReply {
				t.Fatalf("meta set and get of %s after the kill: %q", meta, got)
			}
			// Past backend_retry_waittime the proxy tries the dead backend
			// again; the failover route hides that, too.
			time.Sleep(1200 * time.Millisecond)
		}
		// The fresh keys the main pool hashes to the dead backend went to
		// the spare one. The proxy's workers add their counts to the
		// total in the background: wait for it, bounded.
		deadline := time.Now().Add(10 * time.Second)
		n := mcproxyRetries(t, raw)
		for ; n == 0 && time.Now().Before(deadline); n = mcproxyRetries(t, raw) {
			time.Sleep(100 * time.Millisecond)
		}
		if n == 0 {
			t.Fatal("no request was retried on the spare pool after the kill")
		}
		t.Logf("requests retried on the spare pool: %d", n)
	})
}

// startMemcachedProxy writes the route config for the backends and starts
// the proxy on a free loopback port; it is SIGKILLed at cleanup.
func startMemcachedProxy(t *testing.T, bin string, backends []string) *testproc.Proc {
	t.Helper()
	// memcached drops to nobody before it reads the config.
	dir, err := os.MkdirTemp("", "mcproxy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := make([]any, len(backends))
	for i, b := range backends {
		args[i] = b
	}
	conf := filepath.Join(dir, "routes.lua")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(mcproxyConfig, args...)), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := testproc.Memcached(bin, "-l", "127.0.0.1", "-U", "0", "-t", "2",
		"-o", "proxy_config=routelib,proxy_arg="+conf)
	sp.Name = "memcached-proxy"
	return startSpec(t, sp, true)
}

// mcproxyExchange sends req and reads n bytes of reply (the length of the
// reply wanted), or what came before the deadline.
func mcproxyExchange(c *rawConn, req string, n int) string {
	c.t.Helper()
	c.send(req)
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, n)
	got, err := io.ReadFull(c.r, buf)
	if err != nil {
		return fmt.Sprintf("%s[%v]", buf[:got], err)
	}
	// A longer reply than wanted shows as its extra bytes.
	c.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var extra bytes.Buffer
	if _, err := io.Copy(&extra, c.r); err != nil && !isTimeout(err) {
		return fmt.Sprintf("%s%s[%v]", buf, extra.Bytes(), err)
	}
	return string(buf) + extra.String()
}

// mcproxyRetries is the failover route's retry count from "stats proxy".
func mcproxyRetries(t *testing.T, c *rawConn) int {
	t.Helper()
	v, ok := c.stats("proxy")["user_default_retries"]
	n, err := strconv.Atoi(v)
	if !ok || err != nil {
		t.Fatalf("stats proxy: user_default_retries %q", v)
	}
	return n
}
