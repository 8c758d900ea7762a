package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer is a minimal in-process memcached for the engine tests: get
// and set over the text protocol, with an optional stall and refusal of
// large sets, so each behaviour under test can be provoked on purpose.
type fakeServer struct {
	ln         net.Listener
	stallAt    time.Duration // after this long from the first request, stop replying ...
	stallFor   time.Duration // ... for this long (0: no stall)
	maxValue   int           // sets above this size get SERVER_ERROR (0: no limit)
	silent     bool          // never reply
	startOnce  sync.Once
	start      time.Time // the first request's arrival; set once, under startOnce
	mu         sync.Mutex
	items      map[string][]byte
	sets, gets int
	accepted   int
	wg         sync.WaitGroup
}

func startFakeServer(t *testing.T, configure func(*fakeServer)) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, items: map[string][]byte{}}
	if configure != nil {
		configure(s)
	}
	var conns []net.Conn
	var cmu sync.Mutex
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			cmu.Lock()
			conns = append(conns, c)
			cmu.Unlock()
			s.mu.Lock()
			s.accepted++
			s.mu.Unlock()
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		// The stall is timed from the first request, not from the
		// server's start: a client slow to start on a loaded machine
		// would otherwise miss it.
		s.startOnce.Do(func() { s.start = time.Now() })
		if since := time.Since(s.start); s.stallFor > 0 && since >= s.stallAt && since < s.stallAt+s.stallFor {
			w.Flush()
			time.Sleep(s.stallAt + s.stallFor - since)
		}
		var reply string
		switch {
		case f[0] == "get" && len(f) == 2:
			s.mu.Lock()
			v, ok := s.items[f[1]]
			s.gets++
			s.mu.Unlock()
			reply = "END\r\n"
			if ok {
				reply = fmt.Sprintf("VALUE %s 0 %d\r\n%s\r\nEND\r\n", f[1], len(v), v)
			}
		case f[0] == "set" && len(f) == 5:
			n, err := strconv.Atoi(f[4])
			if err != nil {
				return
			}
			data := make([]byte, n+2)
			if _, err := io.ReadFull(r, data); err != nil {
				return
			}
			reply = "STORED\r\n"
			if s.maxValue > 0 && n > s.maxValue {
				reply = "SERVER_ERROR object too large for cache\r\n"
			} else {
				s.mu.Lock()
				s.items[f[1]] = data[:n]
				s.sets++
				s.mu.Unlock()
			}
		default:
			reply = "ERROR\r\n"
		}
		if s.silent {
			continue
		}
		w.WriteString(reply)
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}
