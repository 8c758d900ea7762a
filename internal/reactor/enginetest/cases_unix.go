package enginetest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// unixSocketSpread: the -s listener has a single acceptor (see
// reactor.UnixSpreader for why), so its clients get descriptors in the
// order they connected, as memcached's watcher_connid.t relies on; and
// engines with reactors deal the clients out to them in turn rather than
// piling them on the acceptor's reactor.
//
// Engines without `stats reactors` (the go engine) are only held to the
// first part: they accept each listener from one goroutine and serve every
// connection on its own goroutine, scheduled by the Go runtime over all
// threads, so "which reactor serves it" has no meaning there.
//
// Clients connect one at a time, each waited for until the engine holds it,
// so the only fd that appears between steps is the new client's, and the
// reactor whose count rose is the one it was dealt to. The engine is asked
// directly, not through a client, whose own connection would be dealt out
// too.
func unixSocketSpread(t *testing.T, f reactor.Factory) {
	path := filepath.Join(t.TempDir(), "gocached.sock")
	s := Start(t, f, reactor.Config{UnixSocket: path, Threads: 3}, Options{})
	const conns = 7 // more than two rounds of 3 reactors
	perReactor, hasReactors := reactorConns(t, s.Eng)
	if hasReactors && len(perReactor) < 2 {
		t.Fatalf("%d reactors with Threads 3, want several to deal to", len(perReactor))
	}
	var clients []*Client
	var fds []int // client fds in connection order
	for i := range conns {
		clients = append(clients, s.Dial(t))
		WaitFor(t, "client "+itoa(i)+" to be registered", func() bool {
			if len(clientFDs(s.Eng)) != i+1 {
				return false
			}
			if !hasReactors {
				return true
			}
			now, _ := reactorConns(t, s.Eng)
			return sum(now) == i+1
		})
		got := clientFDs(s.Eng)
		var fresh []int
		for _, fd := range got {
			if !slices.Contains(fds, fd) {
				fresh = append(fresh, fd)
			}
		}
		if len(fresh) != 1 {
			t.Fatalf("client %d: fds %v after %v, want exactly one new", i, got, fds)
		}
		if len(fds) > 0 && fresh[0] < slices.Max(fds) {
			t.Errorf("client %d got fd %d, below an earlier client's (%v): fds out of connection order", i, fresh[0], fds)
		}
		fds = append(fds, fresh[0])
		if !hasReactors {
			continue
		}
		now, _ := reactorConns(t, s.Eng)
		want := slices.Clone(perReactor)
		want[i%len(want)]++
		if !slices.Equal(now, want) {
			t.Errorf("client %d: conns per reactor %v -> %v, want %v (dealt to reactor %d)",
				i, perReactor, now, want, i%len(want))
		}
		perReactor = now
	}
	for i, c := range clients {
		c.Send("version\r\n")
		if l := c.Line(); !strings.HasPrefix(l, "VERSION ") {
			t.Errorf("client %d: version answered %q", i, l)
		}
	}
}

// clientFDs are the descriptors of the clients in the engine's `stats
// conns`, ascending.
func clientFDs(eng reactor.Engine) []int {
	var fds []int
	eng.GroupStats("conns", func(name, _ string) {
		fd, field, _ := strings.Cut(name, ":")
		if field != "listen_addr" { // listeners have none
			return
		}
		if n, err := strconv.Atoi(fd); err == nil {
			fds = append(fds, n)
		}
	})
	slices.Sort(fds)
	return fds
}

// reactorConns is each reactor's connection count from the engine's `stats
// reactors` (reactor:N:conns); false when the engine has no such group.
func reactorConns(t *testing.T, eng reactor.Engine) ([]int, bool) {
	t.Helper()
	var conns []int
	ok := eng.GroupStats("reactors", func(name, value string) {
		rest, found := strings.CutPrefix(name, "reactor:")
		id, field, _ := strings.Cut(rest, ":")
		if !found || field != "conns" {
			return
		}
		r, err1 := strconv.Atoi(id)
		n, err2 := strconv.Atoi(value)
		if err1 != nil || err2 != nil || r < 0 {
			t.Fatalf("stats reactors: bad line %s %s", name, value)
		}
		for len(conns) <= r {
			conns = append(conns, 0)
		}
		conns[r] = n
	})
	return conns, ok
}

func sum(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}

// unixClosedClient: a client that writes its requests and closes at once
// has them all served, and its close is an orderly one (watch connevents:
// reason=normal), as memcached serves it. Over a unix socket the peer's
// close arrives as a hangup together with the data, which must be read
// before the connection is given up.
func unixClosedClient(t *testing.T, f reactor.Factory) {
	path := filepath.Join(t.TempDir(), "gocached.sock")
	s := Start(t, f, reactor.Config{UnixSocket: path}, Options{})
	w := s.Dial(t)
	w.Send("watch connevents\r\n")
	w.Expect("OK\r\n")
	const clients = 20
	for i := range clients {
		c := s.Dial(t)
		c.Send("set closed-" + itoa(i) + " 0 0 1 noreply\r\nx\r\n")
		c.NC.Close()
	}
	closes := 0
	for closes < clients {
		l := w.Line()
		if !strings.Contains(l, "type=conn_close") {
			continue
		}
		if !strings.Contains(l, " reason=normal ") {
			t.Errorf("watch connevents: %q, want reason=normal for a client that closed", trunc(l))
		}
		closes++
	}
	r := s.Dial(t)
	for i := range clients {
		r.Send("get closed-" + itoa(i) + "\r\n")
		if l := r.Line(); l != "VALUE closed-"+itoa(i)+" 0 1\r\n" {
			t.Fatalf("client %d's set, sent before it closed: get answered %q", i, l)
		}
		r.Expect("x\r\n", "END\r\n")
	}
}

// unixSocketLeftAtStop: a stop leaves the -s path alone, as memcached
// does (it never unlinks it; the next start replaces a stale one). By the
// time a server stops, the path may belong to a newer server started on
// it to take over, and removing it would cut that one off from every new
// client.
func unixSocketLeftAtStop(t *testing.T, f reactor.Factory) {
	path := filepath.Join(t.TempDir(), "gocached.sock")
	s, served := StartManual(t, f, reactor.Config{UnixSocket: path}, Options{})
	c := s.Dial(t)
	c.Send("version\r\n")
	c.Line()
	// The successor takes the path over, as memcached's start does.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	next, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Eng.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the stop removed the successor's socket file: %v", err)
	}
	nc, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		t.Fatalf("the successor is unreachable through %s after the stop: %v", path, err)
	}
	nc.Close()
}
