package enginetest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/reactor"
)

// waitCurr waits until curr_connections reads want: engines register
// accepted connections asynchronously to the client's connect.
func waitCurr(t *testing.T, s *Server, want uint64) {
	t.Helper()
	WaitFor(t, "curr_connections "+strconv.FormatUint(want, 10), func() bool {
		return s.Eng.ServerStats().CurrConnections == want
	})
}

// countsAsMemcached checks memcached 1.6's numbers with one listener and
// three clients: curr 3 (listener + clients - 1), total 4, and after one
// client leaves, curr 2.
func countsAsMemcached(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	a, b, c := s.Dial(t), s.Dial(t), s.Dial(t)
	waitCurr(t, s, 3)
	st := a.Stats("")
	for name, want := range map[string]string{"curr_connections": "3", "total_connections": "4",
		"rejected_connections": "0", "accepting_conns": "1", "threads": itoa(s.Eng.Threads())} {
		if st[name] != want {
			t.Errorf("stats %s = %q, want %q", name, st[name], want)
		}
	}
	if n, _ := strconv.Atoi(st["connection_structures"]); n < 4 {
		t.Errorf("connection_structures = %q, want >= 4", st["connection_structures"])
	}
	c.NC.Close()
	waitCurr(t, s, 2)
	_ = b
}

// statsConns checks the shape and states of `stats conns`: the listener,
// a client that has sent nothing (conn_new_cmd), an idle one that has
// (conn_read), one partway through a set's data block (conn_nread), and
// the one asking (conn_parse_cmd).
func statsConns(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{Threads: 1}, Options{})
	fresh := s.Dial(t)
	idle := s.Dial(t)
	idle.Send("version\r\n")
	idle.Line()
	sending := s.Dial(t)
	sending.Send("set foo 0 0 6\r\nab")
	asking := s.Dial(t)
	waitCurr(t, s, 4)
	// The half-sent set draws no reply, so nothing says when the server
	// has read it; and the idle client has its reply once it is written,
	// maybe before its engine marks it reading again (the portable
	// engine's goroutine does so after its write returns). Ask until both
	// show.
	var lines map[string]string
	WaitFor(t, "stats conns to show the half-sent set read and the idle client reading", func() bool {
		lines = asking.Stats("conns")
		return connState(lines, sending) != "conn_new_cmd" && connState(lines, idle) == "conn_read"
	})
	byFD := make(map[string]map[string]string)
	for name, v := range lines {
		fd, field, ok := strings.Cut(name, ":")
		if !ok {
			t.Fatalf("stats conns line %q has no fd", name)
		}
		if byFD[fd] == nil {
			byFD[fd] = make(map[string]string)
		}
		byFD[fd][field] = v
	}
	states := make(map[string]string) // client addr -> state
	listeners := 0
	for fd, m := range byFD {
		if m["state"] == "conn_listening" {
			listeners++
			if m["addr"] != "tcp:"+s.Addr || len(m) != 3 {
				t.Errorf("listener %s: %v, want addr tcp:%s and 3 fields", fd, m, s.Addr)
			}
			continue
		}
		if m["listen_addr"] != "tcp:"+s.Addr || len(m) != 4 {
			t.Errorf("client %s: %v, want listen_addr tcp:%s and 4 fields", fd, m, s.Addr)
		}
		states[m["addr"]] = m["state"]
	}
	if listeners != 1 {
		t.Errorf("%d listeners in stats conns, want 1", listeners)
	}
	for who, c := range map[string]*Client{"conn_new_cmd": fresh, "conn_read": idle, "conn_nread": sending, "conn_parse_cmd": asking} {
		if got := states["tcp:"+c.NC.LocalAddr().String()]; got != who {
			t.Errorf("client %s state %q, want %q (all: %v)", c.NC.LocalAddr(), got, who, states)
		}
	}
}

// connState is the state `stats conns` lines give client c ("" if absent).
func connState(lines map[string]string, c *Client) string {
	addr := "tcp:" + c.NC.LocalAddr().String()
	for name, v := range lines {
		fd, field, _ := strings.Cut(name, ":")
		if field == "addr" && v == addr {
			return lines[fd+":state"]
		}
	}
	return ""
}

// wildcardBothFamilies checks that an empty -l listens as memcached does:
// one IPv4 and one IPv6 socket, both counted as connections.
func wildcardBothFamilies(t *testing.T, f reactor.Factory) {
	probe, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	probe.Close()
	s := Start(t, f, reactor.Config{}, Options{Wildcard: true})
	_, port, _ := net.SplitHostPort(s.Addr)
	v4 := DialAddr(t, net.JoinHostPort("127.0.0.1", port))
	v6 := DialAddr(t, net.JoinHostPort("::1", port))
	waitCurr(t, s, 3) // two listeners + two clients - 1
	st := v4.Stats("")
	if st["total_connections"] != "4" {
		t.Errorf("total_connections = %s, want 4 (two listeners, two clients)", st["total_connections"])
	}
	conns := v6.Stats("conns")
	var got []string
	for name, v := range conns {
		if strings.HasSuffix(name, ":addr") && conns[strings.TrimSuffix(name, "addr")+"state"] == "conn_listening" {
			got = append(got, v)
		}
	}
	want := map[string]bool{"tcp:0.0.0.0:" + port: true, "tcp6:[::]:" + port: true}
	if len(got) != 2 || !want[got[0]] || !want[got[1]] {
		t.Errorf("listeners %v, want tcp:0.0.0.0:%s and tcp6:[::]:%s", got, port, port)
	}
}

func connLimit(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{MaxConns: 2}, Options{})
	a, b := s.Dial(t), s.Dial(t)
	for _, c := range []*Client{a, b} {
		c.Send("version\r\n")
		c.Line()
	}
	// The refused client has already sent a request: it must still read the
	// message and an orderly close, not a reset.
	over := s.Dial(t)
	over.Send("get k\r\n")
	over.Expect(string(reactor.RejectMessage))
	over.ExpectEOF()
	st := a.Stats("")
	if st["rejected_connections"] != "1" || st["curr_connections"] != "2" || st["total_connections"] != "3" {
		t.Errorf("rejected/curr/total = %s/%s/%s, want 1/2/3",
			st["rejected_connections"], st["curr_connections"], st["total_connections"])
	}
	b.NC.Close()
	waitCurr(t, s, 1)
	again := s.Dial(t)
	again.Send("version\r\n")
	if l := again.Line(); !strings.HasPrefix(l, "VERSION") {
		t.Fatalf("after a slot freed: %q", l)
	}
}

func statsReset(t *testing.T, f reactor.Factory) {
	s := Start(t, f, reactor.Config{}, Options{})
	c := s.Dial(t)
	c.Send("version\r\n")
	c.Line()
	c.Send("stats reset\r\n")
	c.Expect("RESET\r\n")
	st := c.Stats("")
	if st["total_connections"] != "0" || st["curr_connections"] != "1" {
		t.Errorf("after stats reset total/curr = %s/%s, want 0/1", st["total_connections"], st["curr_connections"])
	}
	if n, _ := strconv.Atoi(st["bytes_read"]); n == 0 || n > 32 {
		t.Errorf("after stats reset bytes_read = %d, want only the stats request", n)
	}
}

// unixSocket: -s listens on an AF_UNIX path instead of TCP, with -a's
// permissions, shown in `stats conns` as memcached shows it.
func unixSocket(t *testing.T, f reactor.Factory) {
	path := filepath.Join(t.TempDir(), "gocached.sock")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f(reactor.Config{UnixSocket: path, NewSession: func() reactor.Session { return nil }}); err == nil {
		t.Fatalf("-s over a regular file succeeded; want an error rather than deleting it")
	}
	os.Remove(path)
	s := Start(t, f, reactor.Config{UnixSocket: path, UnixMask: 0o766}, Options{})
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o766 {
		t.Fatalf("socket file %v, %v; want a socket with mode 0766", fi, err)
	}
	a, b := s.Dial(t), s.Dial(t)
	a.Send("set k 0 0 1\r\nx\r\n")
	a.Expect("STORED\r\n")
	b.Send("get k\r\n")
	b.Expect("VALUE k 0 1\r\n", "x\r\n", "END\r\n")
	waitCurr(t, s, 2)
	conns := a.Stats("conns")
	listeners, clients := 0, 0
	for name, v := range conns {
		switch {
		case strings.HasSuffix(name, ":state") && v == "conn_listening":
			listeners++
			if got := conns[strings.TrimSuffix(name, "state")+"addr"]; got != "unix:"+path {
				t.Errorf("listener addr %q, want unix:%s", got, path)
			}
		case strings.HasSuffix(name, ":listen_addr"):
			clients++
			if v != "unix:"+path {
				t.Errorf("client listen_addr %q, want unix:%s", v, path)
			}
		}
	}
	if listeners != 1 || clients != 2 {
		t.Errorf("stats conns: %d listeners, %d clients; want 1 and 2: %v", listeners, clients, conns)
	}
}
