package metrics

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
	"github.com/gocached/gocached/internal/reactor/epoll"
	"github.com/gocached/gocached/internal/reactor/portable"
)

// liveEngines are the engines the live test serves; the ones that cannot
// run here (epoll off Linux) are skipped.
var liveEngines = []struct {
	name string
	new  reactor.Factory
}{
	{"epoll", epoll.New},
	{"go", portable.New},
}

// volatile stats change between a client's `stats` and the scrape that
// follows it (clocks, CPU time, the stats request's own bytes).
var volatile = map[string]bool{
	"uptime": true, "time": true, "rusage_user": true, "rusage_system": true,
	"bytes_read": true, "bytes_written": true,
	// the reactor serving the client's stats request runs on meanwhile
	"epoll_waits": true, "events": true, "max_batch": true,
}

// moved lists the stats whose values differ between two reads taken
// around another: the store's background work (the LRU maintainer, the
// crawler) may change them at any moment, so the read in between can
// only be held to the ones that stood still.
func moved(before, after map[string]string) map[string]bool {
	m := map[string]bool{}
	for k, v := range before {
		if after[k] != v {
			m[k] = true
		}
	}
	return m
}

// valuesOf indexes gathered samples by series (name and labels).
func valuesOf(t *testing.T, got map[string]bool) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for s := range got {
		i := strings.LastIndexByte(s, ' ')
		v, err := strconv.ParseFloat(s[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", s, err)
		}
		out[s[:i]] = v
	}
	return out
}

// TestMatchesStats serves real sessions on each engine, drives some
// traffic, and checks that every metric read from SessionSource equals the
// stat a client reads over the socket with `stats`, `stats settings` and
// `stats reactors`.
func TestMatchesStats(t *testing.T) {
	for _, e := range liveEngines {
		t.Run(e.name, func(t *testing.T) {
			eng, err := e.new(reactor.Config{Listen: "127.0.0.1", Threads: 1, NewSession: func() reactor.Session { return nil }})
			if err != nil {
				t.Skipf("engine %s unavailable here: %v", e.name, err)
			}
			_ = eng.Shutdown(t.Context())
			s := enginetest.Start(t, e.new, reactor.Config{Threads: 2}, enginetest.Options{})
			c := s.Dial(t)
			c.Send("set a 0 0 1\r\n5\r\nget a b\r\nincr a 2\r\nincr b 1\r\ndelete b\r\ntouch a 100\r\ngets a\r\n")
			c.Expect("STORED\r\n", "VALUE a 0 1\r\n", "5\r\n", "END\r\n", "7\r\n", "NOT_FOUND\r\n", "NOT_FOUND\r\n", "TOUCHED\r\n")
			if l := c.Line(); !strings.HasPrefix(l, "VALUE a 0 1 ") {
				t.Fatalf("gets: %q", l)
			}
			c.Expect("7\r\n", "END\r\n")
			c.Send("cas a 0 0 1 1\r\n9\r\nset big 0 0 1048577\r\n" + strings.Repeat("v", 1048577) + "\r\n")
			c.Expect("EXISTS\r\n", "SERVER_ERROR object too large for cache\r\n")

			general, settings := c.Stats(""), c.Stats("settings")
			var reactors map[string]string
			if e.name == "epoll" {
				reactors = c.Stats("reactors")
			}
			got, _ := gather(t, NewCollector(SessionSource(s.Env)))
			vals := valuesOf(t, got)
			shifted := moved(general, c.Stats(""))
			checked := 0
			check := func(series string, stats map[string]string, key string) {
				t.Helper()
				checked++
				want, err := strconv.ParseFloat(stats[key], 64)
				if err != nil {
					t.Errorf("stat %s = %q", key, stats[key])
					return
				}
				if v, ok := vals[series]; !ok || v != want {
					t.Errorf("%s = %v (present %v), stat %s = %v", series, v, ok, key, want)
				}
			}
			for _, st := range generalStats {
				if !volatile[st.key] && !shifted[st.key] {
					check(st.name+"{}", general, st.key)
				}
			}
			for _, op := range commandOps {
				check(fmt.Sprintf(`memcached_commands_total{command=%q,status="hit"}`, op), general, op+"_hits")
				check(fmt.Sprintf(`memcached_commands_total{command=%q,status="miss"}`, op), general, op+"_misses")
			}
			check(`memcached_max_connections{}`, settings, "maxconns")
			check(`memcached_version{version="`+general["version"]+`"}`, map[string]string{"v": "1"}, "v")
			if vals[`memcached_item_too_large_total{}`] != 1 || vals[`memcached_commands_total{command="incr",status="hit"}`] != 1 {
				t.Errorf("the traffic was not counted: %v", vals)
			}
			for name := range reactors {
				id, field, _ := strings.Cut(strings.TrimPrefix(name, "reactor:"), ":")
				if st, ok := reactorStats[field]; ok && !volatile[field] {
					check(fmt.Sprintf(`%s{reactor=%q}`, st.name, id), reactors, name)
				}
			}
			t.Logf("%d metrics equal their stats", checked)
			if e.name == "epoll" && vals[`gocached_reactor_connections{reactor="0"}`]+vals[`gocached_reactor_connections{reactor="1"}`] != 1 {
				t.Errorf("reactor connections do not add up to the one client: %v", vals)
			}
		})
	}
}

// TestBinarySource checks that a server taking binary connections only
// gives the same stats through the binary protocol's STAT.
func TestBinarySource(t *testing.T) {
	s := enginetest.Start(t, portable.New, reactor.Config{Threads: 1}, enginetest.Options{})
	bin := &protocol.Env{Store: s.Env.Store, Settings: s.Env.Settings, Server: s.Env.Server,
		StartUnix: s.Env.StartUnix, Protocol: protocol.BindingBinary}
	for _, group := range []string{"", "settings"} {
		text, err := textStats(s.Env, group)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SessionSource(bin).Stats(group)
		if err != nil {
			t.Fatalf("binary stats %q: %v", group, err)
		}
		after, err := textStats(s.Env, group)
		if err != nil {
			t.Fatal(err)
		}
		shifted := moved(text, after)
		for k, v := range text {
			if !volatile[k] && !shifted[k] && k != "binding_protocol" && got[k] != v {
				t.Errorf("stats %q: %s = %q over binary, %q over text", group, k, got[k], v)
			}
		}
		if len(got) != len(text) {
			t.Errorf("stats %q: %d stats over binary, %d over text", group, len(got), len(text))
		}
	}
	if _, err := SessionSource(bin).Stats("reactors"); err != ErrUnknownGroup {
		t.Errorf("binary stats reactors on the portable engine: %v, want ErrUnknownGroup", err)
	}
	if _, err := SessionSource(s.Env).Stats("reactors"); err != ErrUnknownGroup {
		t.Errorf("text stats reactors on the portable engine: %v, want ErrUnknownGroup", err)
	}
}

// TestSASLSource checks that a server requiring SASL still gives its stats:
// the Session that renders them needs no authentication.
func TestSASLSource(t *testing.T) {
	s := enginetest.Start(t, portable.New, reactor.Config{Threads: 1}, enginetest.Options{})
	pw := filepath.Join(t.TempDir(), "pwdb")
	if err := os.WriteFile(pw, []byte("user:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sasl, err := protocol.NewSASL(pw)
	if err != nil {
		t.Fatal(err)
	}
	env := &protocol.Env{Store: s.Env.Store, Settings: s.Env.Settings, Server: s.Env.Server,
		StartUnix: s.Env.StartUnix, SASL: sasl}
	got, err := SessionSource(env).Stats("")
	if err != nil || got["version"] == "" || got["curr_connections"] == "" {
		t.Fatalf("stats under SASL: %v, %v", got, err)
	}
}
