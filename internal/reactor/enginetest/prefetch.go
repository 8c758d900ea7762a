package enginetest

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/reactor"
)

// CheckPrefetchInputs is for an engine that holds several connections' new
// input before it serves any (io_uring's completion batch): it hands that
// input to Config.PrefetchInputs first.
// Eight clients send a get each at the same moment, round after round,
// until one call held two or more of them (bounded: 200 rounds); every
// call must hold whole requests the clients sent, and every get must be
// answered.
func CheckPrefetchInputs(t *testing.T, f reactor.Factory) {
	var mu sync.Mutex
	var batches [][]string // copies: the engine's slices are not to be kept
	spy := func(ins [][]byte) {
		var b []string
		for _, in := range ins {
			b = append(b, string(in))
		}
		mu.Lock()
		batches = append(batches, b)
		mu.Unlock()
	}
	s := Start(t, f, reactor.Config{Threads: 1, PrefetchInputs: spy}, Options{})
	var conns []net.Conn
	for range 8 {
		c, err := net.Dial(s.Network, s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		conns = append(conns, c)
	}
	sent := map[string]bool{}
	for round := range 200 {
		for i, c := range conns {
			req := "get k" + strconv.Itoa(round) + "-" + strconv.Itoa(i) + "\r\n"
			sent[req] = true
			if _, err := c.Write([]byte(req)); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range conns {
			buf := make([]byte, 5)
			if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "END\r\n" {
				t.Fatalf("round %d: %q, %v", round, buf, err)
			}
		}
		mu.Lock()
		seen := batches
		mu.Unlock()
		for _, b := range seen {
			if len(b) < 2 {
				t.Fatalf("PrefetchInputs called with %d input(s): %q", len(b), b)
			}
			for _, in := range b {
				if !sent[in] {
					t.Fatalf("PrefetchInputs got %q, which no client sent as one read", in)
				}
			}
		}
		if len(seen) > 0 {
			t.Logf("round %d: a batch of %d inputs", round, len(seen[0]))
			return
		}
	}
	t.Fatal("200 rounds of 8 simultaneous gets and no batch of two inputs reached PrefetchInputs")
}
