package flash

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeServer speaks the few commands the workload sends: set, get, me,
// stats and stats slabs. Keys in flash answer `me` with the small class 1
// and count get_extstore on a hit.
type fakeServer struct {
	ln net.Listener
	wg sync.WaitGroup

	mu      sync.Mutex
	items   map[string]int  // key -> value length
	flash   map[string]bool // keys whose value is "on flash"
	cmdGet  int64
	hits    int64
	extGets int64
	written int64 // extstore_objects_written
	noExt   bool  // report no extstore counters
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, items: map[string]int{}, flash: map[string]bool{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) accept() {
	defer s.wg.Done()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		conns = append(conns, c)
		s.wg.Add(1)
		go func() { defer s.wg.Done(); defer c.Close(); s.serve(c) }()
	}
}

func (s *fakeServer) serve(c net.Conn) {
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
		s.mu.Lock()
		switch {
		case f[0] == "set" && len(f) == 5:
			n, _ := strconv.Atoi(f[4])
			s.mu.Unlock()
			if _, err := r.Discard(n + 2); err != nil {
				return
			}
			s.mu.Lock()
			s.items[f[1]] = n
			delete(s.flash, f[1])
			w.WriteString("STORED\r\n")
		case f[0] == "get" && len(f) == 2:
			s.cmdGet++
			if n, ok := s.items[f[1]]; ok {
				s.hits++
				if s.flash[f[1]] {
					s.extGets++
				}
				fmt.Fprintf(w, "VALUE %s 0 %d\r\n%s\r\nEND\r\n", f[1], n, strings.Repeat("a", n))
			} else {
				w.WriteString("END\r\n")
			}
		case f[0] == "me" && len(f) == 2:
			if n, ok := s.items[f[1]]; ok {
				cls := 20
				if s.flash[f[1]] {
					cls = 1
				}
				fmt.Fprintf(w, "ME %s exp=-1 la=0 cas=1 fetch=no cls=%d size=%d\r\n", f[1], cls, n+60)
			} else {
				w.WriteString("EN\r\n")
			}
		case f[0] == "stats" && len(f) == 2 && f[1] == "slabs":
			w.WriteString("STAT 1:chunk_size 96\r\nSTAT 20:chunk_size 17352\r\nSTAT active_slabs 2\r\nEND\r\n")
		case f[0] == "stats" && len(f) == 1:
			fmt.Fprintf(w, "STAT cmd_get %d\r\nSTAT get_hits %d\r\n", s.cmdGet, s.hits)
			if !s.noExt {
				fmt.Fprintf(w, "STAT get_extstore %d\r\nSTAT extstore_objects_written %d\r\n", s.extGets, s.written)
			}
			w.WriteString("END\r\n")
		default:
			w.WriteString("ERROR\r\n")
		}
		s.mu.Unlock()
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}
