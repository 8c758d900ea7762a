//go:build linux

package epoll

import (
	"bytes"
	"net/netip"
	"strconv"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// fakeSession is a tiny line protocol that exercises the engine's I/O the way
// protocol.Session does (pipelining, -R yields, Want for large bodies, Close),
// so the reactor machinery can be tested on its own:
//
//	get N      -> "VALUE k 0 N\r\n" + N bytes + "\r\nEND\r\n"
//	set N      -> reads an N-byte body plus "\r\n", replies "STORED\r\n"
//	quit       -> Close
//	anything   -> "ERROR\r\n"
type fakeSession struct {
	maxReqs int // -R
	want    int
}

func newFake(maxReqs int) func() reactor.Session {
	return func() reactor.Session { return &fakeSession{maxReqs: maxReqs} }
}

const fakeMaxLine = 2048

func (s *fakeSession) Reset()    { s.want = 0 }
func (s *fakeSession) Want() int { return s.want }

func (s *fakeSession) Process(in, out []byte) (int, []byte, protocol.Status) {
	pos, reqs := 0, 0
	s.want = 0
	for pos < len(in) {
		if s.maxReqs > 0 && reqs == s.maxReqs {
			return pos, out, protocol.Yield
		}
		nl := bytes.IndexByte(in[pos:], '\n')
		if nl < 0 {
			if len(in)-pos > fakeMaxLine {
				return len(in), out, protocol.Close
			}
			return pos, out, protocol.NeedMore
		}
		line := bytes.TrimRight(in[pos:pos+nl], "\r")
		next := pos + nl + 1
		cmd, arg, _ := bytes.Cut(line, []byte(" "))
		n, _ := strconv.Atoi(string(arg))
		switch string(cmd) {
		case "get":
			out = append(out, "VALUE k 0 "...)
			out = strconv.AppendInt(out, int64(n), 10)
			out = append(out, "\r\n"...)
			for i := 0; i < n; i++ {
				out = append(out, byte('a'+i%26))
			}
			out = append(out, "\r\nEND\r\n"...)
		case "set":
			if len(in)-next < n+2 {
				s.want = next - pos + n + 2
				return pos, out, protocol.NeedMore
			}
			next += n + 2
			out = append(out, "STORED\r\n"...)
		case "quit":
			return next, out, protocol.Close
		default:
			out = append(out, "ERROR\r\n"...)
		}
		pos = next
		reqs++
	}
	return pos, out, protocol.NeedMore
}

// fakeValue is the body fakeSession returns for `get n`.
func fakeValue(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// newTestEngine builds the engine with Sessions from newSession.
func newTestEngine(cfg reactor.Config, newSession func() reactor.Session) (*engine, error) {
	cfg.NewSession = newSession
	return newEngine(cfg)
}

func (s *fakeSession) OpenedFrom(int, string, netip.AddrPort) {}
func (s *fakeSession) Pending() bool                          { return false }
func (s *fakeSession) SetWakeup(func())                       {}
