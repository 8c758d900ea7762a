package reactor_test

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/gocached/gocached/internal/reactor"
	"github.com/gocached/gocached/internal/reactor/enginetest"
)

// Bounds of one fuzz input.
const (
	fuzzMaxCuts   = 8               // pieces an input is sent in, at most
	fuzzIOTimeout = 5 * time.Second // per connection, writes and reads together
)

// FuzzEngineConn sends each input over a fresh connection to every engine
// of the table in conformance_test.go, cut into pieces at points derived
// from the input (so a failing input replays the same cuts), half-closes
// the connection, and reads until the server closes it; then a new
// connection must still be answered `version`. The engines are started once
// per process over a small store and serve every input, so inputs run by
// the hundreds a second; whatever earlier inputs stored stays, which lets
// inputs interact as real clients do.
func FuzzEngineConn(f *testing.F) {
	seeds := []string{
		"set k 0 0 5\r\nhello\r\nget k\r\n",
		"gets k\r\ncas k 0 0 1 1\r\nx\r\ndelete k\r\n",
		"set n 0 0 1\r\n9\r\nincr n 18446744073709551615\r\ndecr n 3\r\nget n n n\r\n",
		"ms m 2 T0\r\nhi\r\nmg m v c f\r\nma m\r\nmd m q\r\nmn\r\n",
		"get " + strings.Repeat("k ", 300) + "\r\n",
		strings.Repeat("x", 3000) + "\r\nversion\r\n",
		"set big 0 0 2000000\r\n" + strings.Repeat("v", 4096),
		"stats\r\nstats settings\r\nstats conns\r\nstats reactors\r\nstats items\r\nstats slabs\r\n",
		"touch k 10\r\ngat 0 k\r\nflush_all 0\r\nverbosity 1\r\nquit\r\nget k\r\n",
		"\x80\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00k",
		"\x80\x01\x00\x01\x08\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
			"\x00\x00\x00\x00\x00\x00\x00\x00kv",
		"set k 0 0 -1\r\nset k 0 0 1 noreply\r\nab\r\nget\r\n\r\n\n\r",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	type server struct {
		name string
		addr string
	}
	var servers []server
	for _, e := range engines {
		if !available(f, e.new) {
			f.Logf("engine %s unavailable on this system", e.name)
			continue
		}
		s := enginetest.Start(f, e.new, reactor.Config{Threads: 2, MaxConns: 64}, enginetest.Options{})
		servers = append(servers, server{e.name, s.Addr})
	}
	if len(servers) == 0 {
		f.Skip("no engine available")
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, s := range servers {
			if err := feedCut(s.addr, in); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if err := answersVersion(s.addr); err != nil {
				t.Fatalf("%s: after the input: %v", s.name, err)
			}
		}
	})
}

// feedCut writes in over one connection in pieces, reading whatever the
// server replies meanwhile, then half-closes and waits for the server to
// close its side. A server that resets the connection (it may close with
// input unread) is fine; one that keeps it open past the timeout is not.
func feedCut(addr string, in []byte) error {
	nc, err := net.DialTimeout("tcp", addr, fuzzIOTimeout)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(fuzzIOTimeout))
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, nc)
		read <- err
	}()
	rng := rand.New(rand.NewPCG(xxhash.Sum64(in), uint64(len(in))))
	cuts := make([]int, 0, fuzzMaxCuts+1)
	for range rng.IntN(fuzzMaxCuts) {
		if len(in) > 0 {
			cuts = append(cuts, rng.IntN(len(in)))
		}
	}
	cuts = append(cuts, len(in))
	slices.Sort(cuts)
	prev := 0
	for _, c := range cuts {
		if c == prev {
			continue
		}
		if _, err := nc.Write(in[prev:c]); err != nil {
			break // the server closed (quit, a bad line): what it sent is still read
		}
		prev = c
	}
	_ = nc.(*net.TCPConn).CloseWrite()
	err = <-read
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errors.New("the server kept the connection open after the client's EOF")
	}
	return nil // EOF or a reset: the server closed
}

// answersVersion checks that a new connection is served.
func answersVersion(addr string) error {
	nc, err := net.DialTimeout("tcp", addr, fuzzIOTimeout)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(fuzzIOTimeout))
	if _, err := nc.Write([]byte("version\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	got := 0
	for !strings.HasSuffix(string(buf[:got]), "\r\n") && got < len(buf) {
		n, err := nc.Read(buf[got:])
		got += n
		if err != nil {
			return errors.New("version: " + err.Error() + " after " + string(buf[:got]))
		}
	}
	if !strings.HasPrefix(string(buf[:got]), "VERSION ") {
		return errors.New("version answered " + string(buf[:got]))
	}
	return nil
}
