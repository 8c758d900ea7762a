package portable

import (
	"bytes"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gocached/gocached/internal/protocol"
	"github.com/gocached/gocached/internal/reactor"
)

// goFake is a tiny line protocol with the shape of memcached's text protocol,
// so the engine can be tested on its own terms (buffering, pipelining, Want,
// Yield, Close) whatever state internal/protocol is in:
//
//	set <key> <n>\r\n<n bytes>\r\n -> STORED
//	get <key>\r\n                  -> VALUE <key> <n>\r\n<data>\r\nEND (or END)
//	sleep <ms>\r\n                 -> SLEPT, after ms milliseconds
//	big <n>\r\n                    -> n bytes of 'x' then \r\n
//	conns\r\n                      -> the engine's `stats conns` lines, then END
//	panic\r\n                      -> panics (the engine must survive it)
//	quit\r\n                       -> Close
//
// At most perCall requests are handled per Process call; with input left
// over the fake returns Yield.
type goFake struct {
	shared  *goFakeShared
	want    int
	perCall int
}

type goFakeShared struct {
	mu       sync.Mutex
	items    map[string][]byte
	server   *engine
	sleeping chan struct{} // receives when a sleep request starts
	resets   int
}

func newGoFakeShared() *goFakeShared {
	return &goFakeShared{items: make(map[string][]byte), sleeping: make(chan struct{}, 16)}
}

func (sh *goFakeShared) newSession(perCall int) func() reactor.Session {
	return func() reactor.Session { return &goFake{shared: sh, perCall: perCall} }
}

func (f *goFake) Want() int { return f.want }

func (f *goFake) Reset() {
	f.want = 0
	f.shared.mu.Lock()
	f.shared.resets++
	f.shared.mu.Unlock()
}

func (f *goFake) Process(in, out []byte) (int, []byte, protocol.Status) {
	done := 0
	for handled := 0; ; handled++ {
		if done == len(in) {
			return done, out, protocol.NeedMore
		}
		if f.perCall > 0 && handled == f.perCall {
			return done, out, protocol.Yield
		}
		n, reply, st, ok := f.one(in[done:], out)
		if !ok {
			return done, out, protocol.NeedMore
		}
		done += n
		out = reply
		if st == protocol.Close {
			return done, out, st
		}
	}
}

// one handles the request at the front of in, or reports ok=false when it is
// incomplete (setting want when the full size is known).
func (f *goFake) one(in, out []byte) (int, []byte, protocol.Status, bool) {
	eol := bytes.Index(in, []byte("\r\n"))
	if eol < 0 {
		f.want = 0
		return 0, out, protocol.NeedMore, false
	}
	line := string(in[:eol])
	f.want = 0
	fields := bytes.Fields([]byte(line))
	if len(fields) == 0 {
		return eol + 2, append(out, "ERROR\r\n"...), protocol.NeedMore, true
	}
	arg := func(i int) string {
		if i < len(fields) {
			return string(fields[i])
		}
		return ""
	}
	sh := f.shared
	switch arg(0) {
	case "set":
		n, _ := strconv.Atoi(arg(2))
		total := eol + 2 + n + 2
		if len(in) < total {
			f.want = total
			return 0, out, protocol.NeedMore, false
		}
		sh.mu.Lock()
		sh.items[arg(1)] = bytes.Clone(in[eol+2 : eol+2+n])
		sh.mu.Unlock()
		return total, append(out, "STORED\r\n"...), protocol.NeedMore, true
	case "get":
		sh.mu.Lock()
		v, hit := sh.items[arg(1)]
		sh.mu.Unlock()
		if hit {
			out = append(out, "VALUE "+arg(1)+" "+strconv.Itoa(len(v))+"\r\n"...)
			out = append(append(out, v...), "\r\n"...)
		}
		return eol + 2, append(out, "END\r\n"...), protocol.NeedMore, true
	case "sleep":
		ms, _ := strconv.Atoi(arg(1))
		sh.sleeping <- struct{}{}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return eol + 2, append(out, "SLEPT\r\n"...), protocol.NeedMore, true
	case "big":
		n, _ := strconv.Atoi(arg(1))
		out = append(out, bytes.Repeat([]byte("x"), n)...)
		return eol + 2, append(out, "\r\n"...), protocol.NeedMore, true
	case "conns":
		sh.server.GroupStats("conns", func(name, value string) {
			out = append(out, "STAT "+name+" "+value+"\r\n"...)
		})
		return eol + 2, append(out, "END\r\n"...), protocol.NeedMore, true
	case "panic":
		panic("goFake: panic requested")
	case "quit":
		return eol + 2, out, protocol.Close, true
	}
	return eol + 2, append(out, "ERROR\r\n"...), protocol.NeedMore, true
}

// newTestEngine builds the engine with Sessions from newSession.
func newTestEngine(cfg reactor.Config, newSession func() reactor.Session) (*engine, error) {
	cfg.NewSession = newSession
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return e.(*engine), nil
}

func (f *goFake) OpenedFrom(int, string, netip.AddrPort) {}
func (f *goFake) Pending() bool                          { return false }
func (f *goFake) SetWakeup(func())                       {}
